"""``agentflow-eval run``: evaluate an agent on an eval set.

Report-only by default: it exits 0 whatever the pass rate (a scorecard, not a gate);
``--fail-under RATE`` turns it into a gate. Bad input — files, the agent, any flag value,
a ``--resume`` whose folder is in use or holds another run — exits 2 with one line and no
traceback, before the flow starts; a run that cannot go on (Prefect's temporary server
did not start, a model provider refused the credentials) exits 3, a run in which every
trial errored exits 4, and Ctrl-C exits 130; they say how to finish the run with
``--resume``. Everything printed is redacted and shows control characters escaped.

While trials run, a progress display on stderr follows the run folder (see
:mod:`agentflow_eval.cli.progress`); stdout gets the scorecard (``--quiet``: the summary
line only; ``--json``: the run summary as JSON).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agentflow_eval.cli.common import (
    EXIT_BELOW_THRESHOLD,
    EXIT_INTERRUPTED,
    EXIT_NO_TRIAL_COMPLETED,
    EXIT_OK,
    EXIT_RUN_FAILED,
    add_tolerance_flags,
    fail,
    one_line,
    positive_float,
    positive_int,
    terminal_text,
)
from agentflow_eval.cli.run_flags import (
    add_baseline_flags,
    add_fail_under_flag,
    add_no_prefect_flag,
    add_print_flags,
    add_publish_flags,
    add_run_timeout_flag,
    add_track_flag,
    add_verbose_flag,
)
from agentflow_eval.models import defaults

if TYPE_CHECKING:  # imported where used: the command starts Prefect's server before them
    from agentflow_eval.agents.base import AgentUnderTest
    from agentflow_eval.cli.progress import RunFolderWatch
    from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI
    from agentflow_eval.models.params import EvaluateParams
    from agentflow_eval.pipeline.outcome import RunOutcome
    from agentflow_eval.run.folder_lock import RunFolderLock
    from agentflow_eval.run.plan import RunHandle
    from agentflow_eval.run.run_json import RunRecord

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "run",
        aliases=["eval"],
        help="evaluate an agent on an eval set",
        description="Evaluate an agent on an eval set: every case several times, judged, "
        "reported. Exits 0 whatever the pass rate unless --fail-under is given.",
    )
    parser.add_argument(
        "agent",
        nargs="?",
        metavar="AGENT",
        help="module:attr, file.py:attr or http(s):// URL; left out when every case is a "
        "component case (run EVALSET)",
    )
    parser.add_argument(
        "evalset", nargs="?", metavar="EVALSET", help="eval-set file or folder (native or ADK)"
    )
    parser.add_argument(
        "--config", metavar="FILE", help="config file (default: test_config.json beside EVALSET)"
    )
    parser.add_argument(
        "--runs",
        type=positive_int,
        metavar="N",
        help=f"trials per case (default {defaults.RUNS}, or the config's)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help=f"trials in flight (default {defaults.MAX_CONCURRENCY}, or the config's)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        dest="trial_timeout_s",
        metavar="SECONDS",
        help=f"seconds per trial (default {defaults.TRIAL_TIMEOUT_S:g}, or the config's)",
    )
    parser.add_argument(
        "--case",
        action="append",
        dest="cases",
        metavar="PATTERN",
        help="only cases whose id matches PATTERN (shell-style: weather_*); repeatable",
    )
    parser.add_argument("--limit", type=positive_int, metavar="N", help="only the first N cases")
    parser.add_argument(
        "--output",
        default=defaults.OUTPUT_DIR,
        metavar="DIR|FILE.json",
        help=f"folder for run folders (default {defaults.OUTPUT_DIR}); or a .json file: the "
        "JSON report (results.json) is written there, the run folder beside it",
    )
    parser.add_argument(
        "--model", metavar="MODEL", help="LiteLLM model for the agent (LiteLLM agents)"
    )
    parser.add_argument("--judge-model", metavar="MODEL", help="LiteLLM model for LLM judges")
    again = parser.add_mutually_exclusive_group()
    again.add_argument("--resume", metavar="RUN_DIR", help="finish an earlier, interrupted run")
    again.add_argument(
        "--rerun-errored",
        metavar="RUN_DIR",
        help="run an earlier run's errored trials again, in a new run folder",
    )
    add_publish_flags(parser)
    add_fail_under_flag(parser)
    parser.add_argument(
        "--count-infrastructure-errors",
        action="store_true",
        help="count trials the model provider failed (after retries) against the pass rate "
        "(default: reported apart, left out)",
    )
    add_print_flags(parser)
    add_baseline_flags(parser)
    add_track_flag(parser)
    add_tolerance_flags(parser)
    add_verbose_flag(parser)
    add_run_timeout_flag(parser)
    parser.set_defaults(rejudge_from=None)  # set by ``agentflow-eval rejudge``, run through here
    add_no_prefect_flag(parser)
    parser.add_argument(
        "--max-file-mb",
        type=positive_float,
        metavar="MIB",
        help="the largest eval-set or config file read, checked before reading it (default "
        "64, or $AGENTFLOW_MAX_FILE_MB)",
    )
    parser.add_argument(
        "--open", action="store_true", help="open the report in a browser when the run is done"
    )


def _params(args: argparse.Namespace, earlier: RunRecord | None = None) -> EvaluateParams:
    """The run's parameters: from the flags, or those ``earlier`` was started with (a
    resume or a rerun) with the flags given now on top."""
    from agentflow_eval.models.params import EvaluateParams, S3Options

    overrides = {
        key: value
        for key, value in {
            "config": args.config,
            "runs": args.runs,
            "max_concurrency": args.max_concurrency,
            "trial_timeout_s": args.trial_timeout_s,
            "timeout_minutes": args.timeout_minutes,
            "model": args.model,
            "judge_model": args.judge_model,
            "publish_to": args.publish_to,
            "cases": args.cases,
            "limit": args.limit,
            "count_infrastructure_errors": args.count_infrastructure_errors or None,
            "baseline": args.baseline,
            "fail_on_regression": args.fail_on_regression or None,
            "rejudge_from": args.rejudge_from,
            "max_cost_increase": args.max_cost_increase,
            "max_latency_increase": args.max_latency_increase,
            "max_token_increase": args.max_token_increase,
            "max_tool_call_increase": args.max_tool_call_increase,
            "track": args.track,
        }.items()
        if value is not None
    }
    s3 = S3Options(
        endpoint_url=args.s3_endpoint_url,
        region=args.s3_region,
        path_style=args.s3_path_style,
        report_links=args.s3_links or ("public" if args.s3_public_url else "presigned"),
        public_url=args.s3_public_url,
        link_expiry_hours=args.s3_link_expiry_hours,
    )
    agent, evalset = args.agent, args.evalset
    if agent and not evalset and _names_an_evalset(agent):
        agent, evalset = None, agent  # component cases need no agent
    if earlier is not None:
        params = earlier.params()
        update = dict(overrides)
        if agent:
            update["agent"] = agent
        if evalset:
            update["evalset"] = evalset
        if args.s3_endpoint_url or args.s3_region or args.s3_path_style:
            update["s3"] = s3
        return params.model_copy(update=update)
    if not evalset:
        raise ValueError(
            "run needs AGENT and EVALSET (EVALSET alone when every case is a component "
            "case), or --resume RUN_DIR"
        )
    report_file = _report_file(args.output)
    output_dir = str(report_file.parent) if report_file else args.output
    return EvaluateParams(agent=agent, evalset=evalset, output_dir=output_dir, s3=s3, **overrides)


def _names_an_evalset(given: str) -> bool:
    """Whether the one positional given names an eval set (a JSON or YAML file, or a
    folder that is not an agent's), so that the agent is left out."""
    path = Path(given)
    if path.is_file():
        return path.suffix.lower() in (".json", ".yaml", ".yml")
    return path.is_dir() and not any(
        (path / name).is_file() for name in ("agent.py", "__init__.py")
    )


def _report_file(output: str) -> Path | None:
    """The JSON report's path when ``--output`` names a ``.json`` file (not a folder)."""
    path = Path(output)
    if path.suffix.lower() == ".json" and not path.is_dir():
        return path
    return None


def _write_report_file(run_dir: Path, target: Path) -> None:
    """results.json of ``run_dir`` copied to ``target`` (all at once: a reader never sees
    half a file)."""
    import shutil

    from agentflow_eval.files.atomic import atomic_text_file

    with (
        (run_dir / "results.json").open(encoding="utf-8") as source,
        atomic_text_file(target) as copy,
    ):
        shutil.copyfileobj(source, copy)


def _check_publish_target(
    target: str | None, endpoint_url: str | None, region: str | None, path_style: bool
) -> None:
    """A publish target that cannot be used fails now, not after every trial ran."""
    if not target:
        return
    from agentflow_eval.storage.targets import parse_target

    try:
        parse_target(target, endpoint_url=endpoint_url, region=region, path_style=path_style)
    except ValueError as exc:
        raise ValueError(f"--publish-to {target}: {one_line(exc, field=False)}") from None


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:  # before the run started (importing, checking inputs)
        print(
            "\nagentflow-eval: interrupted before the run started; nothing to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    from agentflow_eval.cli.direct import wants_no_prefect
    from agentflow_eval.redaction import install_log_redaction

    install_log_redaction()  # no log line of this process carries a secret
    no_prefect = wants_no_prefect(args.no_prefect, os.environ)
    # The flow run's record gets every log line; the terminal only warnings and errors
    # (the scorecard says the rest), unless --verbose.
    os.environ.setdefault(
        "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO" if args.verbose else "WARNING"
    )
    # Prefect's server sends a usage heartbeat when it starts. The temporary server this
    # command launches lives for one run: its heartbeat describes nothing, and offline
    # (or racing the server's fresh database) it prints errors and tracebacks into the
    # run's output. Off for that server unless the user set it; a server of one's own
    # (PREFECT_API_URL) keeps its own setting.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect's client sends usage events of its own (its first import, first flow run)
    # unless DO_NOT_TRACK is set (read when Prefect is imported, so set before): a run of
    # this command is not a Prefect user's onboarding. Off unless the user set it.
    os.environ.setdefault("DO_NOT_TRACK", "1")
    try:  # what the flags alone can tell, before anything starts
        _check_publish_target(
            args.publish_to, args.s3_endpoint_url, args.s3_region, args.s3_path_style
        )
    except ValueError as exc:
        return fail(str(exc))
    from agentflow_eval.errors import InputError

    try:  # a folder another process holds is refused before anything slow starts
        held = _hold_resumed_folder(args.resume)
    except InputError as exc:
        return fail(str(exc))
    try:
        return _launch_and_run(args, held, no_prefect)
    finally:
        if held is not None:
            held.release()  # the run's handle owned it; this lets go on every other way out


def _hold_resumed_folder(resume: str | None) -> RunFolderLock | None:
    """The lock of the run folder ``--resume`` names (``None`` without one, or when it
    is no run folder: reading it says so, later)."""
    if not resume or not (Path(resume) / "run.json").is_file():
        return None
    from agentflow_eval.run.folder_lock import RunFolderLock

    return RunFolderLock.acquire(resume)


def _launch_and_run(args: argparse.Namespace, held: RunFolderLock | None, no_prefect: bool) -> int:
    # Boot Prefect's temporary API server on the other core while this process imports
    # Prefect and the agent and checks the inputs (a no-op when PREFECT_API_URL names one).
    api = None if no_prefect else _launch_temporary_api()
    sys.path.insert(0, os.getcwd())  # agents named as package.module:attr from the project

    from agentflow_eval.demo import install_for as install_demo_for
    from agentflow_eval.errors import InputError
    from agentflow_eval.run.meta import models_named
    from agentflow_eval.run.plan import plan_from_params
    from agentflow_eval.run.run_json import RunRecord

    if args.baseline and args.baseline.strip().rstrip("/") == "latest" and not args.publish_to:
        return fail("--baseline latest is the last run published to --publish-to: give both")
    rerun_dir: Path | None = None
    try:
        if args.rerun_errored:
            rerun_dir = _prepare_rerun(args.rerun_errored)
            if rerun_dir is None:
                return EXIT_OK
        earlier_dir = rerun_dir or args.resume
        earlier = RunRecord.read(earlier_dir) if earlier_dir else None
        if earlier is not None and earlier.started_in is not None:
            # agents named as package.module:attr from the project the run started in
            sys.path.append(str(earlier.started_in))
        params = _params(args, earlier)
        if no_prefect:
            from agentflow_eval.cli.direct import check_runs_without_prefect

            check_runs_without_prefect(params)
        s3 = params.s3
        _check_publish_target(params.publish_to, s3.endpoint_url, s3.region, s3.path_style)
        # Everything the user can fix is found here, before the flow run starts: the
        # agent, the inputs, a run folder another process holds or that holds another
        # run. The plan made here is the one the flow runs (its folder is locked now).
        handle, agent = plan_from_params(
            params,
            environ=os.environ,
            resume=earlier,
            held=held,
            max_file_mb=args.max_file_mb,
        )
    except InputError as exc:
        return fail(str(exc))
    except (FileNotFoundError, ValueError) as exc:  # pydantic's ValidationError included
        return fail(one_line(exc))
    # agentflow-demo/* models answer offline, whoever calls them (when the run needs them)
    install_demo_for(models_named(handle.plan.config, handle.plan.meta.agent_model))
    with handle:
        if no_prefect:
            from agentflow_eval.cli.direct import direct_run, show_logs

            show_logs(args.verbose)
            start = direct_run(params, handle.plan, agent, os.environ)
        else:
            start = _flow_run(api, params, handle, agent)
        return _run_planned(args, params, handle, agent, rerun_dir, start)


def _launch_temporary_api() -> TemporaryPrefectAPI | None:
    """Prefect's temporary API server, launched now (see its module)."""
    from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI

    return TemporaryPrefectAPI.launch()


def _flow_run(
    api: TemporaryPrefectAPI | None,
    params: EvaluateParams,
    handle: RunHandle,
    agent: AgentUnderTest | None,
) -> Callable[[], Awaitable[RunOutcome]]:
    """The planned run as a run of the ``evaluate`` flow in this process, on ``api``
    (a call that makes the coroutine). A failed regression gate hands back the complete
    run: the command reports it, then fails."""
    from agentflow_eval.flows.evaluate import PlannedRun, RegressionGateFailed, evaluate
    from agentflow_eval.flows.support.console import quiet_deliberate_stops
    from agentflow_eval.flows.support.temporary_api import run_on

    quiet_deliberate_stops()  # a run stopped on purpose is told in one line, below
    planned = PlannedRun.of(handle, agent)

    async def flow_run() -> RunOutcome:
        try:
            return await run_on(
                api,
                lambda: evaluate(**params.flow_parameters(), planned=planned),
                flow_name=evaluate.name,
            )
        except RegressionGateFailed as exc:
            return exc.outcome

    return flow_run


def _run_planned(
    args: argparse.Namespace,
    params: EvaluateParams,
    handle: RunHandle,
    agent: AgentUnderTest | None,
    rerun_dir: Path | None,
    start: Callable[[], Awaitable[RunOutcome]],
) -> int:
    """Run the planned run (``start``: the flow, or the stages directly) in this process,
    following its folder; then report."""
    for warning in handle.plan.warnings:
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)
    if args.verbose:
        who = f"agent {agent.name}" if agent is not None else "components"
        print(terminal_text(f"{who}: running {params.evalset}"), file=sys.stderr)
    from agentflow_eval.cli.interrupt import run_interruptibly
    from agentflow_eval.cli.progress import RunFolderWatch

    # (this module imports no Prefect: the direct path may name its error too)
    from agentflow_eval.flows.support.temporary_api import TemporaryAPIError

    watch = RunFolderWatch(handle.paths.run_dir, handle.plan.total_trials)
    try:
        with _following(watch, args):
            outcome = run_interruptibly(start)
    except KeyboardInterrupt:
        return _interrupted(watch.run_dir)
    except TemporaryAPIError as exc:
        print(f"agentflow-eval: error: {exc}; no trial has run", file=sys.stderr)
        if not handle.plan.resumed:  # a new run that never started leaves no folder behind
            shutil.rmtree(handle.paths.run_dir, ignore_errors=True)
        return EXIT_RUN_FAILED
    except Exception as exc:
        stopped = _stopped(exc, watch.run_dir)
        if stopped is None:
            raise
        return stopped
    report_file = None if (rerun_dir or args.resume) else _report_file(args.output)
    if report_file is not None:
        _write_report_file(outcome.run_dir, report_file)
    code = _report(outcome, args)
    if report_file is not None and not args.json:
        print(terminal_text(f"JSON report in {_shown(report_file)}"))
    return code


def _prepare_rerun(source: str) -> Path | None:
    from agentflow_eval.run.rerun import prepare_rerun

    rerun = prepare_rerun(source)
    if rerun.errored == 0:
        print(f"no trial of {source} errored: nothing to run again", file=sys.stderr)
        return None
    print(
        f"running {rerun.errored} errored trial(s) of {source} again in "
        f"{_shown(rerun.run_dir)} "
        f"({rerun.kept} finished trials kept)",
        file=sys.stderr,
    )
    return rerun.run_dir


class _following:
    """The progress display the flags and the terminal call for, following ``watch``
    (nothing but the watch with ``--quiet``: it still finds the run folder for a
    Ctrl-C)."""

    def __init__(self, watch: RunFolderWatch, args: argparse.Namespace) -> None:
        from agentflow_eval.cli.progress import LiveDisplay, PlainDisplay, follow_run

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


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when it is
    inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _interrupted(run_dir: Path | None) -> int:
    """Ctrl-C: say what was kept and how to finish; a second Ctrl-C while Prefect shuts
    down ends the process at once."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(EXIT_INTERRUPTED))
    if run_dir is None or not (run_dir / "run.json").exists():
        print(
            "\nagentflow-eval: interrupted before the run started; nothing to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    from agentflow_eval.run.resumable import completed_keys

    kept = len(completed_keys(run_dir / "trials.jsonl"))
    print(
        f"\nagentflow-eval: interrupted; {kept} finished trial(s) are kept in "
        f"{_shown(run_dir)}\n"
        f"finish the run with: agentflow-eval run --resume {shlex.quote(_shown(run_dir))}",
        file=sys.stderr,
    )
    return EXIT_INTERRUPTED


def _report(outcome: RunOutcome, args: argparse.Namespace) -> int:
    from agentflow_eval.demo.names import SIMULATED_LABEL
    from agentflow_eval.report.scorecard import format_scorecard, overall_line
    from agentflow_eval.report.summary import run_summary

    run = outcome.run
    below = args.fail_under is not None and run.totals.pass_rate < args.fail_under
    if args.json:
        summary = run_summary(
            run,
            outcome.run_dir,
            notes=outcome.notes,
            published=outcome.published,
            report_url=outcome.report_url,
            fail_under=args.fail_under,
            comparison=outcome.comparison,
        )
        print(summary.model_dump_json(indent=2))
    elif args.quiet:
        print(terminal_text(overall_line(run)))
        if outcome.comparison is not None:
            from agentflow_eval.compare.brief import comparison_lines

            for line in comparison_lines(outcome.comparison)[:2]:  # baseline and verdict
                print(terminal_text(line))
        print(terminal_text(f"results in {_shown(outcome.run_dir)}"))
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
                f"results in {_shown(outcome.run_dir)}  (report.html, results.json, junit.xml)"
            )
        )
        for note in outcome.notes:
            print(terminal_text(note))
    if args.open:
        from agentflow_eval.cli.view import open_report

        open_report(outcome.run_dir / "report.html")
    if run.totals.trials and run.totals.errored == run.totals.trials:
        return fail(
            f"every trial errored ({run.totals.trials} of {run.totals.trials}): the run "
            "measured nothing about the agent (see the errors in report.html)",
            EXIT_NO_TRIAL_COMPLETED,
        )
    compared = outcome.comparison
    if compared is not None and compared.gate_failed:
        why = (
            "a significant regression from the baseline"
            if compared.regressed
            else "the baseline could not be read, so a regression cannot be ruled out"
        )
        print(f"--fail-on-regression: {why}", file=sys.stderr)
        return EXIT_BELOW_THRESHOLD
    if below:
        print(
            f"pass rate {run.totals.pass_rate:.0%} is below --fail-under {args.fail_under:.0%}",
            file=sys.stderr,
        )
        return EXIT_BELOW_THRESHOLD
    return EXIT_OK


def _stopped(exc: BaseException, run_dir: Path) -> int | None:
    """The exit code and one-line message for a run that could not go on (a provider
    refused the credentials, the disk is full); ``None`` for anything else. Everything
    the user could fix was refused before the flow started."""
    from agentflow_eval.files.disk_full import disk_full_in
    from agentflow_eval.llm.retry import auth_error_in
    from agentflow_eval.pipeline.deadline import RunTimedOut

    if isinstance(exc, RunTimedOut):
        return fail(
            f"the run did not finish within {exc.minutes:g} min (--timeout-minutes); the "
            f"trials it finished are kept: finish it with --resume {_shown(run_dir)}",
            EXIT_RUN_FAILED,
        )
    full = disk_full_in(exc)
    if full is not None:
        where = full.filename or run_dir
        return fail(
            f"no space left writing {where} ({full.strerror}); the run stopped: free space "
            f"in {_shown(run_dir)}, then finish it with --resume {_shown(run_dir)} (the "
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
