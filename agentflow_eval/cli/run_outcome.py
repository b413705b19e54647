"""How the run commands (``run``, ``rejudge``) tell a run's end: the scorecard, one line
or JSON on stdout, and the exit code its gates and its stop call for. The verdicts are the
one call's (:class:`~agentflow_eval.pipeline.gates.GateVerdict`); this only words them.

Exit codes: 0 the run finished (report-only, whatever its pass rate); 1 a gate the user
set failed (``--fail-under``, ``--fail-on-regression``); 3 the run could not go on
(its deadline, refused credentials, a full disk, no file descriptors left, the temporary
server); 4 every trial errored; 130 Ctrl-C. Everything printed is redacted, control
characters escaped.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agentflow_eval.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_BELOW_THRESHOLD,
    EXIT_INTERRUPTED,
    EXIT_NO_TRIAL_COMPLETED,
    EXIT_OK,
    EXIT_RUN_FAILED,
    fail,
    terminal_text,
)
from agentflow_eval.cli.early import wants_no_prefect
from agentflow_eval.cli.request_flags import report_file_of
from agentflow_eval.cli.view import open_report
from agentflow_eval.compare.brief import comparison_lines
from agentflow_eval.demo.names import SIMULATED_LABEL
from agentflow_eval.files.atomic import atomic_text_file
from agentflow_eval.files.disk_full import disk_full_in
from agentflow_eval.files.no_follow import LinkInRunFolder
from agentflow_eval.files.out_of_descriptors import descriptor_limit, descriptors_exhausted_in
from agentflow_eval.llm.retry import auth_error_in
from agentflow_eval.pipeline.deadline import RunTimedOut
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.report.scorecard import format_scorecard, overall_line
from agentflow_eval.report.summary import run_summary
from agentflow_eval.run.resumable import completed_keys

__all__ = ["Console", "interrupted", "shown", "stopped", "tell"]


@dataclass(frozen=True)
class Console:
    """What the flags say about the terminal and the way the run goes, apart from the
    run's own settings (those are the request's)."""

    quiet: bool = False
    json: bool = False
    full: bool = False
    verbose: bool = False
    open: bool = False
    no_prefect: bool = False
    report_file: Path | None = None
    """``--output FILE.json``: the JSON report is copied there."""

    @classmethod
    def of(cls, args: argparse.Namespace, environ: Mapping[str, str]) -> Console:
        return cls(
            quiet=args.quiet,
            json=args.json,
            full=args.full,
            verbose=args.verbose,
            open=args.open,
            no_prefect=wants_no_prefect(args.no_prefect, environ),
            report_file=report_file_of(args.output_dir),
        )


def shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when it is
    inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def tell(outcome: RunOutcome, console: Console, *, report_file: Path | None, out: TextIO) -> int:
    """Print the finished run on ``out`` as the flags ask (and copy its JSON report to
    ``report_file``); the exit code its gates call for."""
    if report_file is not None:
        with (
            (outcome.run_dir / "results.json").open(encoding="utf-8") as source,
            atomic_text_file(report_file) as copy,  # a reader never sees half a file
        ):
            shutil.copyfileobj(source, copy)
    lines, problems, code = _told(outcome, console)
    if report_file is not None and not console.json:
        lines.append(f"JSON report in {shown(report_file)}")
    for line in lines:
        print(line if console.json else terminal_text(line), file=out)
    out.flush()
    for problem in problems:
        print(terminal_text(problem), file=sys.stderr)
    if console.open:
        open_report(outcome.run_dir / "report.html")
    return code


def _told(outcome: RunOutcome, console: Console) -> tuple[list[str], list[str], int]:
    """What stdout and stderr get, and the exit code."""
    run, gates = outcome.run, outcome.gates
    if console.json:
        summary = run_summary(
            run,
            outcome.run_dir,
            notes=outcome.notes,
            published=outcome.published,
            report_url=outcome.report_url,
            fail_under=gates.min_pass_rate,
            comparison=outcome.comparison,
        )
        lines = [summary.model_dump_json(indent=2)]
        warned: list[str] = []
    elif console.quiet:
        lines = [overall_line(run)]
        if outcome.comparison is not None:  # baseline and verdict
            lines += comparison_lines(outcome.comparison)[:2]
        lines += [f"results in {shown(outcome.run_dir)}", *outcome.notes]
        warned = [f"agentflow-eval: warning: {line}" for line in gates.untrustworthy_judges]
    else:
        scorecard = format_scorecard(
            run,
            verbose=console.verbose,
            simulated_label=SIMULATED_LABEL,
            trials=outcome.trials,
            full=console.full,
            comparison=outcome.comparison,
        )
        lines = [scorecard, *(f"note: {note}" for note in run.notes)]
        lines.append(f"results in {shown(outcome.run_dir)}  (report.html, results.json, junit.xml)")
        lines += outcome.notes
        warned = [f"agentflow-eval: warning: {line}" for line in gates.untrustworthy_judges]
    if gates.measured_nothing:
        trials = run.totals.trials
        said = (
            f"agentflow-eval: error: every trial errored ({trials} of {trials}): the run "
            "measured nothing about the agent (see the errors in report.html)"
        )
        return lines, [*warned, said], EXIT_NO_TRIAL_COMPLETED
    if gates.regression is not None:
        return (
            lines,
            [*warned, f"--fail-on-regression: {gates.reasons()[0]}"],
            EXIT_BELOW_THRESHOLD,
        )
    if gates.shortfalls:
        return lines, [*warned, *gates.shortfalls], EXIT_BELOW_THRESHOLD
    return lines, warned, EXIT_OK


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
    a provider that refused the credentials, a full disk, no file descriptors left);
    ``None`` for anything else.
    Everything the user could fix was refused before the run started."""
    if isinstance(exc, LinkInRunFolder):  # a link made in the folder while the run ran
        return fail(str(exc), EXIT_BAD_INPUT)
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
    if descriptors_exhausted_in(exc) is not None:
        limit = descriptor_limit()
        return fail(
            "this process ran out of file descriptors (too many open files"
            f"{f', limit {limit}' if limit else ''}); the run stopped: something in it — most "
            "likely the agent — left files or connections open. Finish it with --resume "
            f"{shown(run_dir)} (the trials finished so far are kept)",
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
