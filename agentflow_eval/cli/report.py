"""``agentflow-eval report``: re-render the HTML report of an earlier run, from its run
folder or its ``results.json``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_OK, fail, one_line
from agentflow_eval.files.loading import EvalFileError, load_evalset
from agentflow_eval.files.overwriting import HTML_REPORT, OutputExists, check_overwrite
from agentflow_eval.report import ResultsFileError, read_results_json, write_html
from agentflow_eval.run.expected import with_expectations

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "report",
        help="re-render the HTML report of an earlier run",
        description="Write report.html again from a run folder's results.json (or a "
        "results.json given directly), e.g. after an upgrade.",
    )
    parser.add_argument("results", help="a run folder, or the results.json of an earlier run")
    parser.add_argument(
        "-o",
        "--output",
        help="HTML file to write (default: report.html in the run folder, or beside results.json)",
    )
    parser.add_argument(
        "--evalset",
        help="the eval set, for results written without the cases' expectations",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"write over the --output file even when it is not {HTML_REPORT.description}",
    )


def _results_path(given: Path) -> Path:
    if not given.exists():
        raise FileNotFoundError(
            f"{given}: no such run folder or results.json (a run prints its folder as "
            "'results in ...')"
        )
    if not given.is_dir():
        return given
    results = given / "results.json"
    if results.is_file():
        return results
    if (given / "run.json").is_file():
        raise FileNotFoundError(
            f"{given}: this run has no results.json yet (it did not finish); finish it "
            f"with: agentflow-eval run --resume {given}"
        )
    raise FileNotFoundError(
        f"{given}: not a run folder (no results.json); pass a folder a run printed as "
        "'results in ...', or a results.json"
    )


def run(args: argparse.Namespace) -> int:
    try:
        path = _results_path(Path(args.results))
        results = read_results_json(path)
        if args.evalset:
            results = with_expectations(results, load_evalset(args.evalset).eval_set)
        output = Path(args.output) if args.output else path.parent / "report.html"
        check_overwrite(output, HTML_REPORT, force=args.force)
    except (ResultsFileError, EvalFileError, OutputExists) as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(one_line(exc))
    print(write_html(results, output))
    return EXIT_OK
