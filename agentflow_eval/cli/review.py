"""``agentflow-eval review``: people's verdicts on a finished run's judged trials.

    agentflow-eval review RUN_DIR [--reviewer NAME] [--size N] [--criteria NAME] ...
    agentflow-eval review RUN_DIR --labels FILE [--label-bank DIR]

Without ``--labels``, one person labels the run's sampled judged trials at the terminal,
a key per verdict (:mod:`.review_terminal`): resumable, each label kept as it is given.

``--labels`` imports labels made elsewhere (CSV or JSON lines: case, trial, criterion,
label, reviewer[, note]; see :mod:`agentflow_eval.review.importing`): every row is checked
first, and a bad one is refused in a line naming the file and line (exit 2) with nothing
written. The labels go into the run folder's ``labels.jsonl`` and the label bank (by
default the output folder the run folder is in), and the run's ``results.json`` and
``report.html`` are written again with its judges' agreement.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_OK, fail, one_line, terminal_text
from agentflow_eval.cli.review_terminal import add_sample_flags, review_at_terminal
from agentflow_eval.errors import InputError, StoreError
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.pipeline.agreement import refresh_agreement
from agentflow_eval.report.agreement_text import agreement_lines
from agentflow_eval.review.bank import LabelBank, output_root_of
from agentflow_eval.review.importing import read_label_rows
from agentflow_eval.review.labels import LABELS_FILE, append_labels_whole, read_labels

__all__ = ["add_parser", "review_command", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "review",
        help="people's verdicts on a run's judged trials: label them at the terminal or "
        "import labels, and measure the judges",
        description="Label a finished run's judged verdicts and measure its judges against "
        "the labels (agreement, sensitivity, specificity, κ, the pass rate corrected for "
        "the judges' error). At a terminal: a sample of the judged trials, one key per "
        "verdict (p pass, f fail, or the scale's points; s skip, n note, q quit), each "
        "label kept as it is given; run it again to go on. --labels FILE imports labels "
        "made elsewhere instead.",
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the finished run folder")
    parser.add_argument(
        "--labels",
        metavar="FILE",
        help="import labels from a CSV or JSON-lines file (case, trial, criterion, label, "
        "reviewer[, note]; trial as results.json numbers it, from 0)",
    )
    add_sample_flags(parser)
    parser.add_argument(
        "--label-bank",
        metavar="DIR",
        help="the output folder whose label bank keeps the labels for later runs (default: "
        "the one the run folder is in)",
    )


def run(args: argparse.Namespace) -> int:
    return review_command(args)


def review_command(args: argparse.Namespace) -> int:
    """Label the run at the terminal, or import ``--labels`` into it (see the module)."""
    run_dir = Path(args.run_dir)
    try:
        run = _finished_run(run_dir)
        bank = _bank(args.label_bank, run_dir, run)
    except InputError as exc:
        return fail(str(exc))
    if args.labels is None:
        return review_at_terminal(args, run_dir, run, bank)
    return _import(run_dir, run, Path(args.labels), bank)


def _import(run_dir: Path, run: RunResult, path: Path, bank: LabelBank | None) -> int:
    try:
        imported = read_label_rows(path, run, read_labels(run_dir))
    except InputError as exc:
        return fail(str(exc))
    try:
        append_labels_whole(run_dir, imported.labels)
    except OSError as exc:
        return fail(f"{run_dir / LABELS_FILE}: cannot write it ({one_line(exc)})")
    if bank is not None:
        try:
            bank.add(imported.labels)
        except StoreError as exc:
            print(
                terminal_text(
                    f"agentflow-eval: warning: the labels are in {run_dir / LABELS_FILE} "
                    f"but not in the label bank ({exc}); the run's next re-judge adds them"
                ),
                file=sys.stderr,
            )
    refreshed = refresh_agreement(run_dir, bank=bank)
    skipped = f" ({imported.already} already there)" if imported.already else ""
    print(f"imported {len(imported.labels)} label(s){skipped} into {run_dir / LABELS_FILE}")
    for line in agreement_lines(refreshed):
        print(terminal_text(line))
    return EXIT_OK


def _finished_run(run_dir: Path) -> RunResult:
    if not run_dir.is_dir():
        raise InputError(f"{run_dir}: no such run folder")
    if not (run_dir / "results.json").is_file():
        raise InputError(
            f"{run_dir}: not a finished run (no results.json); finish it first with "
            f"agentflow-eval run --resume {run_dir}"
        )
    return read_results_json(run_dir / "results.json")


def _bank(given: str | None, run_dir: Path, run: RunResult) -> LabelBank | None:
    if given is not None:
        return LabelBank.in_folder(Path(given))
    root = output_root_of(run_dir.resolve(), run.eval_set_id)
    return LabelBank.in_folder(root) if root is not None else None
