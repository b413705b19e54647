"""Every run default, in one place: the CLI, ``AgentEvaluator``, the evaluate flow and
the flow's parameter form all read them from here."""

from __future__ import annotations

__all__ = [
    "CANCEL_GRACE_S",
    "JUDGE_STAGE_CONCURRENCY",
    "MAX_CONCURRENCY",
    "MAX_TRIALS",
    "OUTPUT_DIR",
    "RUNS",
    "RUN_TIMEOUT_MINUTES",
    "SUITE_CRASH_RETRIES",
    "SUITE_EVAL_TIMEOUT_MINUTES",
    "TRACE_MAX_CHARS",
    "TRACE_MAX_DEPTH",
    "TRACE_MAX_MB",
    "TRACE_VERSION_ATTRIBUTE",
    "TRACK",
    "TRIAL_TIMEOUT_S",
]

RUNS = 5
"""Trials per case: a nondeterministic agent needs repetition; the pass rate over repeated
runs is the signal, not one lucky (or unlucky) run."""

MAX_CONCURRENCY = 16
"""Trials in flight at once."""

TRIAL_TIMEOUT_S = 120.0
"""Seconds before a trial that has not finished is failed as hung."""

CANCEL_GRACE_S = 5.0
"""Seconds an agent's code, cancelled at its trial's timeout (or by the run's deadline or
a Ctrl-C), may take to stop before it is abandoned: its trial is recorded as timed out
however it ends, and nothing waits on it past the timeout and this grace."""

RUN_TIMEOUT_MINUTES = 300.0
"""Minutes a run may take before it stops where it is, Failed, its finished trials kept for
a resume: whatever its agent, its providers or its machine do, a run ends. Inside a suite's
``SUITE_EVAL_TIMEOUT_MINUTES``, so an evaluate run a suite started ends itself, resumable,
before the suite gives up on it. 0 (or none) lifts it."""

TRACK = "adhoc"
"""The history a run started by hand joins (the CLI, Python, the form): ``latest`` is the
last good run of the same track, so runs started by hand, by a schedule or by an event
are never each other's baseline unless a team names one track for them."""

OUTPUT_DIR = "eval-results"
"""Where run folders are written, relative to the working directory."""

JUDGE_STAGE_CONCURRENCY = 64
"""Trials being judged at once. LLM judge calls have their own, lower limit
(``judge.max_concurrency``); this only bounds the trials held in memory meanwhile."""

MAX_TRIALS = 1_000_000
"""The most trials one run may hold (cases × runs): ten thousand cases five times over is
well inside it; a mistyped ``runs`` (``1000000000000``) is not."""

SUITE_EVAL_TIMEOUT_MINUTES = 360.0
"""How long a regression suite waits for one eval set's evaluate flow run (queued time
included) before it cancels the run and reports the eval set incomplete: a nightly ends
before the next one starts, whatever became of its workers."""

SUITE_CRASH_RETRIES = 1
"""How many times a suite starts an eval set again whose evaluate run crashed (its
worker or machine was lost): one lost machine should not cost a night's verdict."""

TRACE_VERSION_ATTRIBUTE = "service.version"
"""The attribute (of a trace's root span, else of the resource that emitted it) that
names the agent's version: OpenTelemetry's own for a service's version."""

TRACE_MAX_MB = 64.0
"""The largest line of a trace object (one export request), or pretty-printed trace
document, read, in MiB: the Collector's exports are far smaller; anything larger is
named and skipped unread."""

TRACE_MAX_CHARS = 256 * 1024
"""The longest text of a production trace kept whole (an attribute's value): longer ones
are cut, saying how much was left out."""

TRACE_MAX_DEPTH = 64
"""The deepest a span's JSON may nest before what is below is cut (a span's attribute is
four levels down in OTLP JSON; each nested ``kvlistValue`` adds four)."""
