"""The run commands' door: a run request, prepared, run, followed and told.

``run`` and ``rejudge`` each build a :class:`~agentflow_eval.models.request.RunRequest`
from their flags; :func:`launch` prepares it (bad input: one line, exit 2, before any
flow run or trial exists; a resumed folder another process holds was refused before the
temporary server launched), runs it by the one call — in this process (``--no-prefect``),
or as a run of the ``evaluate`` flow on the server :mod:`.early` launched — while a
progress display follows the run folder, and tells the outcome (:mod:`.run_outcome`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TextIO

from agentflow_eval.cli.common import EXIT_RUN_FAILED, fail, one_line, terminal_text
from agentflow_eval.cli.direct import local_judge_cache, show_logs
from agentflow_eval.cli.early import NO_PREFECT_ENV, EarlyStart
from agentflow_eval.cli.interrupt import run_interruptibly
from agentflow_eval.cli.progress import LiveDisplay, PlainDisplay, RunFolderWatch, follow_run
from agentflow_eval.cli.run_outcome import Console, interrupted, stopped, tell
from agentflow_eval.errors import InputError
from agentflow_eval.flows.support.temporary_api import TemporaryAPIError
from agentflow_eval.import_cost import paused_collection
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.execute import NeedsPrefect, PreparedRun, Runtime, execute, prepare
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.pipeline.stages import PairedOptions
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.run_json import RunRecord

__all__ = ["launch"]


def launch(
    request: RunRequest,
    console: Console,
    early: EarlyStart,
    *,
    earlier: RunRecord | None = None,
) -> int:
    """Run ``request`` from the command line (see the module); the exit code.
    ``earlier`` is the record of the run being resumed or run again."""
    install_log_redaction()  # no log line of this process carries a secret
    direct = Runtime(judge_cache=local_judge_cache(os.environ)) if console.no_prefect else None
    if direct is not None:
        show_logs(console.verbose)
    try:
        if direct is not None:
            direct.check(request)
        # the agent's module and its framework load here
        with paused_collection(freeze=early.owns_process):
            prepared = prepare(request, resume=earlier, held=early.held)
    except NeedsPrefect as exc:
        return fail(
            f"--no-prefect: this run uses {exc.what}, which only the Prefect flow reads; run "
            f"it without --no-prefect (and without {NO_PREFECT_ENV})"
        )
    except InputError as exc:
        return fail(str(exc))
    except (FileNotFoundError, ValueError) as exc:  # pydantic's ValidationError included
        return fail(one_line(exc))
    with prepared.handle:
        if direct is not None:
            start: Callable[[], Awaitable[RunOutcome]] = lambda: execute(  # noqa: E731
                request, direct, prepared=prepared
            )
        else:
            with paused_collection(freeze=early.owns_process):
                from agentflow_eval.cli.in_flow import flow_run  # Prefect, on this path alone

            start = flow_run(early.api, prepared)
        return _followed(
            request, prepared, console, start, fresh=earlier is None, out=early.result_stream
        )


def _followed(
    request: RunRequest,
    prepared: PreparedRun,
    console: Console,
    start: Callable[[], Awaitable[RunOutcome]],
    *,
    fresh: bool,
    out: TextIO,
) -> int:
    """Run the prepared run in this process, following its folder; then tell it on
    ``out`` (the real stdout)."""
    plan = prepared.plan
    for warning in plan.warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)
    if console.verbose:
        who = f"agent {prepared.agent.name}" if prepared.agent is not None else "components"
        print(terminal_text(f"{who}: running {request.evalset}"), file=sys.stderr)
    watch = _watch(request, plan)
    try:
        with _following(watch, console):
            outcome = run_interruptibly(start)
    except KeyboardInterrupt:
        return interrupted(watch.run_dir)
    except TemporaryAPIError as exc:
        print(f"agentflow-eval: error: {exc}; no trial has run", file=sys.stderr)
        if not plan.resumed:  # a new run that never started leaves no folder behind
            shutil.rmtree(plan.paths.run_dir, ignore_errors=True)
        return EXIT_RUN_FAILED
    except Exception as exc:
        code = stopped(exc, watch.run_dir)
        if code is None:
            raise
        return code
    return tell(outcome, console, report_file=console.report_file if fresh else None, out=out)


def _watch(request: RunRequest, plan: RunPlan) -> RunFolderWatch:
    """The watch of the run's folder (a paired run's two), the trials it expects: both
    sides' first round, or an adaptive run's budget."""
    if plan.against is None:
        return RunFolderWatch(plan.paths.run_dir, plan.total_trials)
    total = 2 * plan.total_trials
    options = PairedOptions.of(request, plan)
    if options is not None and options.adaptive and options.design.max_trials:
        total = options.design.max_trials
    return RunFolderWatch(plan.paths.run_dir, total, also=[plan.against.paths.run_dir])


def _following(watch: RunFolderWatch, console: Console) -> AbstractContextManager[object]:
    """The progress display the flags and the terminal call for, following ``watch``
    (with ``--quiet``, none: the watch still finds the run folder for a Ctrl-C)."""
    if console.quiet:
        return nullcontext()
    stream = sys.stderr
    live = stream.isatty() and os.environ.get("TERM") != "dumb"
    return follow_run(watch, LiveDisplay(stream) if live else PlainDisplay(stream))
