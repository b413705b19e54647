"""The run commands' door: a run request, prepared, run, followed and told.

``run`` and ``rejudge`` each build a :class:`~agentflow_eval.models.request.RunRequest`
from their flags; this prepares it (bad input: one line, exit 2, before any flow run or
trial exists; a resumed folder another process holds was refused before the temporary
server launched), runs it by the one call — in this process (``--no-prefect``), or as a
run of the ``evaluate`` flow on the server :mod:`.early` launched — while a progress
display follows the run folder, and renders the outcome (:mod:`.run_outcome`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType

from agentflow_eval.cli.common import EXIT_RUN_FAILED, fail, one_line, terminal_text
from agentflow_eval.cli.direct import local_judge_cache, show_logs
from agentflow_eval.cli.early import NO_PREFECT_ENV, EarlyStart, wants_no_prefect
from agentflow_eval.cli.interrupt import run_interruptibly
from agentflow_eval.cli.progress import LiveDisplay, PlainDisplay, RunFolderWatch, follow_run
from agentflow_eval.cli.request_flags import report_file_of
from agentflow_eval.cli.run_outcome import interrupted, render, shown, stopped
from agentflow_eval.errors import InputError
from agentflow_eval.files.atomic import atomic_text_file
from agentflow_eval.flows.support.temporary_api import TemporaryAPIError
from agentflow_eval.models.request import RunRequest
from agentflow_eval.pipeline.execute import NeedsPrefect, PreparedRun, Runtime, execute, prepare
from agentflow_eval.pipeline.outcome import RunOutcome
from agentflow_eval.redaction import install_log_redaction
from agentflow_eval.run.run_json import RunRecord
from agentflow_eval.storage.targets import parse_target

__all__ = ["check_publish_target", "run_request"]


def check_publish_target(request: RunRequest) -> None:
    """A publish target that cannot be used fails now, not after every trial ran."""
    if not request.publish_to:
        return
    s3 = request.s3
    try:
        parse_target(
            request.publish_to,
            endpoint_url=s3.endpoint_url,
            region=s3.region,
            path_style=s3.path_style,
        )
    except ValueError as exc:
        raise InputError(
            f"--publish-to {request.publish_to}: {one_line(exc, field=False)}"
        ) from None


def run_request(
    request: RunRequest,
    args: argparse.Namespace,
    early: EarlyStart,
    *,
    earlier: RunRecord | None = None,
    rerun_dir: Path | None = None,
) -> int:
    """Run ``request`` from the command line (see the module); the exit code.
    ``earlier`` is the record of the run being resumed or run again."""
    install_log_redaction()  # no log line of this process carries a secret
    no_prefect = wants_no_prefect(args.no_prefect, os.environ)
    try:
        check_publish_target(request)
        if no_prefect:
            Runtime().check(request)
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
        if no_prefect:
            show_logs(args.verbose)
            direct = Runtime(judge_cache=local_judge_cache(prepared.plan.config.judge, os.environ))
            start: Callable[[], Awaitable[RunOutcome]] = lambda: execute(  # noqa: E731
                request, direct, prepared=prepared
            )
        else:
            from agentflow_eval.cli.in_flow import flow_run  # Prefect, on this path alone

            start = flow_run(early.api, request, prepared)
        return _followed(request, prepared, args, start, rerun_dir=rerun_dir, resumed=earlier)


def _followed(
    request: RunRequest,
    prepared: PreparedRun,
    args: argparse.Namespace,
    start: Callable[[], Awaitable[RunOutcome]],
    *,
    rerun_dir: Path | None,
    resumed: RunRecord | None,
) -> int:
    """Run the prepared run in this process, following its folder; then report."""
    plan = prepared.plan
    for warning in plan.warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)
    if args.verbose:
        who = f"agent {prepared.agent.name}" if prepared.agent is not None else "components"
        print(terminal_text(f"{who}: running {request.evalset}"), file=sys.stderr)
    watch = RunFolderWatch(plan.paths.run_dir, plan.total_trials)
    try:
        with _following(watch, args):
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
    report_file = None if (rerun_dir or resumed) else report_file_of(args.output_dir)
    if report_file is not None:
        _write_report_file(outcome.run_dir, report_file)
    code = render(outcome, args)
    if report_file is not None and not args.json:
        print(terminal_text(f"JSON report in {shown(report_file)}"))
    return code


def _write_report_file(run_dir: Path, target: Path) -> None:
    """results.json of ``run_dir`` copied to ``target`` (all at once: a reader never sees
    half a file)."""
    with (
        (run_dir / "results.json").open(encoding="utf-8") as source,
        atomic_text_file(target) as copy,
    ):
        shutil.copyfileobj(source, copy)


class _following:
    """The progress display the flags and the terminal call for, following ``watch``
    (nothing but the watch with ``--quiet``: it still finds the run folder for a
    Ctrl-C)."""

    def __init__(self, watch: RunFolderWatch, args: argparse.Namespace) -> None:
        self._watch = watch
        self._inner: AbstractContextManager[object] | None = None
        if not args.quiet:
            stream = sys.stderr
            live = stream.isatty() and os.environ.get("TERM") != "dumb"
            display = LiveDisplay(stream) if live else PlainDisplay(stream)
            self._inner = follow_run(watch, display)

    def __enter__(self) -> _following:
        if self._inner is not None:
            self._inner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._inner is not None:
            self._inner.__exit__(exc_type, exc, traceback)
        else:
            self._watch.poll()
