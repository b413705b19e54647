"""How the run commands (``run``, ``rejudge``) tell a run's end: the scorecard, one line
or JSON on stdout, and the exit code its gates and its stop call for. The verdicts are the
one call's (:class:`~agentflow_eval.pipeline.gates.GateVerdict`); this only words them.

Exit codes: 0 the run finished (report-only, whatever its pass rate); 1 a gate the user
set failed (``--fail-under``, ``--fail-on-regression``); 3 the run could not go on
(its deadline, refused credentials, a full disk, the temporary server); 4 every trial
errored; 130 Ctrl-C. Everything printed is redacted, control characters escaped.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import sys
from pathlib import Path

from agentflow_eval.cli.common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_INTERRUPTED,
    EXIT_NO_TRIAL_COMPLETED,
    EXIT_OK,
    EXIT_RUN_FAILED,
    fail,
    terminal_text,
)
from agentflow_eval.cli.view import open_report
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.demo.names import SIMULATED_LABEL
from agentflow_eval.files.disk_full import disk_full_in
from agentflow_eval.llm.retry import auth_error_in
from agentflow_eval.pipeline.deadline import RunTimedOut
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.report.scorecard import format_scorecard, overall_line
from agentflow_eval.report.summary import run_summary
from agentflow_eval.run.resumable import completed_keys

__all__ = ["interrupted", "render", "shown", "stopped"]


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when it is
    inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def render(outcome: RunOutcome, args: argparse.Namespace) -> int:
    """Print the finished run as the flags ask; the exit code its gates call for."""
    run = outcome.run
    gates = outcome.gates
    if args.json:
        summary = run_summary(
            run,
            outcome.run_dir,
            notes=outcome.notes,
            published=outcome.published,
            report_url=outcome.report_url,
            fail_under=gates.min_pass_rate,
            comparison=outcome.comparison,
        )
        print(summary.model_dump_json(indent=2))
    elif args.quiet:
        print(terminal_text(overall_line(run)))
        if outcome.comparison is not None:
            for line in comparison_lines(outcome.comparison)[:2]:  # baseline and verdict
                print(terminal_text(line))
        print(terminal_text(f"results in {shown(outcome.run_dir)}"))
        for note in outcome.notes:
            print(terminal_text(note))
    else:
        scorecard = format_scorecard(
            run,
            verbose=args.verbose,
            simulated_label=SIMULATED_LABEL,
            trials=outcome.trials,
            full=args.full,
            comparison=outcome.comparison,
        )
        print(terminal_text(scorecard))
        for note in run.notes:
            print(terminal_text(f"note: {note}"))
        print(
            terminal_text(
                f"results in {shown(outcome.run_dir)}  (report.html, results.json, junit.xml)"
            )
        )
        for note in outcome.notes:
            print(terminal_text(note))
    if args.open:
        open_report(outcome.run_dir / "report.html")
    if gates.measured_nothing:
        return fail(
            f"every trial errored ({run.totals.trials} of {run.totals.trials}): the run "
            "measured nothing about the agent (see the errors in report.html)",
            EXIT_NO_TRIAL_COMPLETED,
        )
    if gates.regression is not None:
        print(f"--fail-on-regression: {gates.reasons()[0]}", file=sys.stderr)
        return EXIT_BELOW_THRESHOLD
    if gates.below_min_pass_rate and gates.min_pass_rate is not None:
        print(
            f"pass rate {gates.pass_rate:.0%} is below --fail-under {gates.min_pass_rate:.0%}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def interrupted(run_dir: Path | None) -> int:
    """Ctrl-C: say what was kept and how to finish; a second Ctrl-C while Prefect shuts
    down ends the process at once."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))
    if run_dir is None or not (run_dir / "run.json").exists():
        print(
            "\nagentflow-eval: interrupted before the run started; nothing to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    kept = len(completed_keys(run_dir / "trials.jsonl"))
    print(
        f"\nagentflow-eval: interrupted; {kept} finished trial(s) are kept in "
        f"{shown(run_dir)}\n"
        f"finish the run with: agentflow-eval run --resume {shlex.quote(shown(run_dir))}",
        file=sys.stderr,
    )
    return EXIT_INTERRUPTED


def stopped(exc: BaseException, run_dir: Path) -> int | None:
    """The exit code and one-line message for a run that could not go on (its deadline,
    a provider that refused the credentials, a full disk); ``None`` for anything else.
    Everything the user could fix was refused before the run started."""
    if isinstance(exc, RunTimedOut):
        return fail(
            f"the run did not finish within {exc.minutes:g} min (--timeout-minutes); the "
            f"trials it finished are kept: finish it with --resume {shown(run_dir)}",
            EXIT_RUN_FAILED,
        )
    full = disk_full_in(exc)
    if full is not None:
        where = full.filename or run_dir
        return fail(
            f"no space left writing {where} ({full.strerror}); the run stopped: free space "
            f"in {shown(run_dir)}, then finish it with --resume {shown(run_dir)} (the "
            "trials finished so far are kept)",
            EXIT_RUN_FAILED,
        )
    refused = auth_error_in(exc)
    if refused is None:
        return None
    where = getattr(refused, "run_dir", None)
    resume = f"--resume {where}" if where else "--resume RUN_DIR"
    return fail(
        f"{refused.reason}; the run stopped: fix the credentials, then finish it with "
        f"{resume} (the trials finished so far are kept)",
        EXIT_RUN_FAILED,
    )
