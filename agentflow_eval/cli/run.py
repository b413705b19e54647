"""``agentflow-eval run``: evaluate an agent on an eval set.

It parses the flags, builds the run request from them (:mod:`.request_flags`: every
request field's flag is derived from the field), hands it to the one call that runs every
request, and renders the outcome (:mod:`.launch`). Report-only by default: it exits 0
whatever the pass rate (a scorecard, not a gate); ``--fail-under RATE`` (the request's
``min_pass_rate``) turns it into a gate. Bad input — files, the agent, any flag value, a
``--resume`` whose folder is in use or holds another run — exits 2 with one line and no
traceback, before the run starts; a run that cannot go on exits 3, a run in which every
trial errored exits 4, and Ctrl-C exits 130; they say how to finish the run with
``--resume``.

While trials run, a progress display on stderr follows the run folder (see
:mod:`agentflow_eval.cli.progress`); stdout gets the scorecard (``--quiet``: the summary
line only; ``--json``: the run summary as JSON).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_INTERRUPTED, EXIT_OK, fail, one_line
from agentflow_eval.cli.early import EarlyStart
from agentflow_eval.cli.launch import launch
from agentflow_eval.cli.request_flags import (
    add_request_flags,
    report_file_of,
    request_from_flags,
)
from agentflow_eval.cli.run_flags import (
    add_force_flag,
    add_no_prefect_flag,
    add_print_flags,
    add_verbose_flag,
)
from agentflow_eval.cli.run_outcome import Console, shown
from agentflow_eval.errors import InputError
from agentflow_eval.files.overwriting import JSON_REPORT, check_overwrite
from agentflow_eval.models.request import RunRequest, flag_of
from agentflow_eval.run.rerun import prepare_rerun
from agentflow_eval.run.run_json import RunRecord

__all__ = ["RUN_FLAGS", "add_parser", "run"]

RUN_FLAGS = tuple(
    name for name in RunRequest.model_fields if name == "s3" or flag_of(RunRequest, name)
)
"""The run request's fields ``run`` takes as flags: every one that has a flag, in the
request's order (``--resume`` among them, beside ``--rerun-errored``); the fields without
one are the flow's alone (secrets, shards, shared storage, allowed agents)."""


EXAMPLES = """\
examples:
  agentflow-eval run my_agent.py:agent evals/orders.evalset.json --runs 3
      each case 3 times, judged by the test_config.json beside the eval set (else the
      default criteria: the exact tool calls, and ROUGE-1 >= 0.8 on the answer)
  agentflow-eval run my_agent:agent evals/ --config eval_config.json --fail-under 80% --no-prefect
      the eval files in evals/ as one eval set; exit 1 below an 80% pass rate; no Prefect
  agentflow-eval run my_agent:agent evals/orders.evalset.json --baseline latest \\
      --publish-to s3://bucket/evals --fail-on-regression
      compared with the last published run: exit 1 on a significant regression
  agentflow-eval run --resume eval-results/orders/20261123T091500Z-3f2a9c1e
      finish a stopped run
"""
"""What ``run --help`` ends with: commands to start from (parsed by the tests)."""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "run",
        aliases=["eval"],
        help="evaluate an agent on an eval set",
        description="Evaluate an agent on an eval set: every case several times, judged,\n"
        "reported. Exits 0 whatever the pass rate unless --fail-under is given.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the examples as written
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
    again = parser.add_mutually_exclusive_group()
    add_request_flags(again, ("resume",))
    again.add_argument(
        "--rerun-errored",
        metavar="RUN_DIR",
        help="run an earlier run's errored trials again, in a new run folder",
    )
    add_request_flags(parser, [name for name in RUN_FLAGS if name != "resume"])
    add_print_flags(parser)
    add_force_flag(parser, JSON_REPORT.description)
    add_verbose_flag(parser)
    add_no_prefect_flag(parser)
    parser.add_argument(
        "--open", action="store_true", help="open the report in a browser when the run is done"
    )


def run(args: argparse.Namespace, early: EarlyStart) -> int:
    """Build the request the flags ask for and launch it."""
    sys.path.insert(0, os.getcwd())  # agents named as package.module:attr from the project
    try:
        earlier = _earlier(args)
        if earlier is None and args.rerun_errored:
            return EXIT_OK  # nothing to run again
        request = _request(args, earlier)
    except InputError as exc:
        return fail(str(exc))
    except (FileNotFoundError, ValueError) as exc:  # pydantic's ValidationError included
        return fail(one_line(exc))
    except KeyboardInterrupt:  # before the run started (reading its inputs)
        print(
            "\nagentflow-eval: interrupted before the run started; nothing to resume",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return launch(request, Console.of(args, os.environ), early, earlier=earlier)


def _earlier(args: argparse.Namespace) -> RunRecord | None:
    """The record of the run this one finishes: the ``--resume`` folder, or the new folder
    ``--rerun-errored`` makes of a finished run without its errored trials (``None``
    when none errored, which it says). An ``--output`` file that may not be written over
    is refused first, since that new folder is the first thing the command writes."""
    report_file = report_file_of(args.output_dir)
    if report_file is not None:
        check_overwrite(report_file, JSON_REPORT, force=args.force)
    if args.rerun_errored:
        rerun = prepare_rerun(args.rerun_errored)
        if rerun.errored == 0:
            print(
                f"no trial of {args.rerun_errored} errored: nothing to run again", file=sys.stderr
            )
            return None
        print(
            f"running {rerun.errored} errored trial(s) of {args.rerun_errored} again in "
            f"{shown(rerun.run_dir)} ({rerun.kept} finished trials kept)",
            file=sys.stderr,
        )
        return RunRecord.read(rerun.run_dir)
    return RunRecord.read(args.resume) if args.resume else None


def _request(args: argparse.Namespace, earlier: RunRecord | None) -> RunRequest:
    """The run request of the flags: over the request ``earlier`` was started with (a
    resume or a rerun), else on their own, completed from the environment."""
    agent, evalset = args.agent, args.evalset
    if agent and not evalset and _names_an_evalset(agent):
        agent, evalset = None, agent  # component cases need no agent
    if earlier is not None:
        if earlier.started_in is not None:
            # agents named as package.module:attr from the project the run started in
            sys.path.append(str(earlier.started_in))
        return request_from_flags(args, earlier=earlier.params(), agent=agent, evalset=evalset)
    if not evalset:
        raise InputError(
            "run needs AGENT and EVALSET (EVALSET alone when every case is a component "
            "case), or --resume RUN_DIR"
        )
    return request_from_flags(args, agent=agent, evalset=evalset).with_environment(os.environ)


def _names_an_evalset(given: str) -> bool:
    """Whether the one positional given names an eval set (a JSON or YAML file, or a
    folder that is not an agent's), so that the agent is left out."""
    path = Path(given)
    if path.is_file():
        return path.suffix.lower() in (".json", ".yaml", ".yml")
    return path.is_dir() and not any(
        (path / name).is_file() for name in ("agent.py", "__init__.py")
    )
