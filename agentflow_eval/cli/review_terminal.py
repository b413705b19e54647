"""``agentflow-eval review RUN_DIR`` at a terminal: one person labels the run's sampled
judged trials, one key per verdict.

Each trial is shown as the review form in the Prefect UI shows it (the case, the
conversation and its tool calls, the answer beside the reference, the criterion, the
judge's verdict, score, threshold and reasoning), laid out with ``rich``; then a key:
``p`` pass, ``f`` fail (or, for a criterion on a scale, its points: ``1`` … ``5``), ``s``
skip, ``n`` a note for this trial (typed, then Enter), ``q`` quit. Each label is appended
to the run's labels as it is given, so quitting loses nothing, and the next
``agentflow-eval review`` of the run by the same reviewer goes on where this one
stopped ("N of M labelled, resuming")."""

from __future__ import annotations

import argparse
import getpass
import json
import shlex
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from agentflow_eval.cli.common import EXIT_OK, fail
from agentflow_eval.cli.review_keys import KeyReader
from agentflow_eval.errors import InputError
from agentflow_eval.models.results import RunResult
from agentflow_eval.models.review_params import ReviewParams
from agentflow_eval.pipeline.review_session import (
    SKIP,
    ReviewSession,
    open_review,
    verdict_choices,
)
from agentflow_eval.report.agreement_text import agreement_lines
from agentflow_eval.review.bank import LabelBank
from agentflow_eval.review.items import ReviewItem
from agentflow_eval.review.labels import LABELS_FILE

__all__ = [
    "ReviewOutcome",
    "add_sample_flags",
    "item_view",
    "label_interactively",
    "review_at_terminal",
]

RESULT_CHARS = 600
"""A tool result longer than this is cut on screen (the run's report has it whole)."""

KEYS = {"p": "pass", "f": "fail", "s": SKIP}


class ReviewOutcome:
    """How a terminal review ended: labels given, and whether the reviewer quit early."""

    def __init__(self, given: int, quit_early: bool) -> None:
        self.given = given
        self.quit_early = quit_early


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, limit: int = RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" … ({len(text) - limit} more)"


def _conversation(item: ReviewItem) -> RenderableType:
    parts: list[RenderableType] = []
    for number, turn in enumerate(item.conversation, start=1):
        parts.append(Text.assemble((f"user ({number}): ", "bold cyan"), turn.user_text))
        for call in turn.tool_calls:
            outcome = f"error: {call.error}" if call.error else _json(call.result)
            parts.append(
                Text.assemble(
                    ("  tool ", "magenta"),
                    (call.name, "bold magenta"),
                    f"({_json(call.args)})",
                    (" → ", "magenta"),
                    _cut(outcome),
                )
            )
        if number < len(item.conversation):  # the last answer is shown below
            answer = turn.answer or "(no answer)"
            parts.append(Text.assemble((f"agent ({number}): ", "bold green"), answer))
    return Group(*parts) if parts else Text("(no turns)", style="dim")


def _judge(item: ReviewItem) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    style = "green" if item.verdict == "pass" else "red"
    table.add_row("verdict", Text(item.verdict, style=style))
    score = "–" if item.score is None else f"{item.score:.2f}"
    threshold = "–" if item.threshold is None else f"{item.threshold:.2f}"
    table.add_row("score", f"{score} (threshold {threshold})")
    table.add_row("its samples", "disagreed" if item.samples_disagreed else "agreed")
    for reasoning in item.reasoning or ([item.reason] if item.reason else []):
        table.add_row("reasoning", Text(reasoning))
    return table


def item_view(item: ReviewItem, *, position: int, total: int) -> RenderableType:
    """One sampled trial, laid out for the terminal."""
    title = f"{position} of {total} · case {item.case_id} · trial {item.trial + 1}"
    criterion = item.criterion
    if item.criterion_label != item.criterion:
        criterion += f" ({item.criterion_label})"
    answers = Table.grid(padding=(0, 2))
    answers.add_column(style="bold")
    answers.add_column()
    answers.add_row("answer", Text(item.final_answer or "(none)"))
    answers.add_row("reference", Text(item.reference_answer or "(the case gives none)"))
    parts: list[RenderableType] = [
        Rule(escape(title)),
        Text.assemble(("criterion ", "bold"), criterion),
    ]
    if item.trial_error:
        parts.append(Text(f"the trial did not finish: {item.trial_error}", style="yellow"))
    parts += [
        Panel(_conversation(item), title="conversation", title_align="left"),
        Panel(answers, title="answer and reference", title_align="left"),
        Panel(_judge(item), title="the judge", title_align="left"),
    ]
    return Group(*parts)


def _prompt(item: ReviewItem) -> str:
    choices = verdict_choices(item)
    if choices[0] == "pass":
        verdicts = "p pass · f fail"
    else:
        verdicts = f"{choices[0]}–{choices[-2]} your score"
    return f"{verdicts} · s skip · n note · q quit"


def _answer_of(item: ReviewItem, key: str) -> str | None:
    """The answer ``key`` gives on ``item``, or ``None`` for a key that is not one."""
    choices = verdict_choices(item)
    if key in KEYS and KEYS[key] in choices:
        return KEYS[key]
    return key if key in choices and key != SKIP else None


def label_interactively(session: ReviewSession, console: Console, keys: KeyReader) -> ReviewOutcome:
    """Ask the reviewer about each trial left in ``session``, appending each label as it
    is given; stops at ``q`` (or the end of the input)."""
    console.print(session.opening_line())
    for position, item in session.remaining():
        console.print(item_view(item, position=position, total=session.total))
        note = ""
        while True:
            console.print(Text(_prompt(item), style="bold"), end=" ")
            key = keys.key()
            console.print(key)
            if key == "q":
                console.print(f"stopped: {session.done} of {session.total} labelled")
                return ReviewOutcome(session.given, quit_early=True)
            if key == "n":
                console.print("note (Enter to end): ", end="")
                note = keys.line()
                continue
            answer = _answer_of(item, key)
            if answer is None:
                console.print(Text(f"{key!r} is not an answer here", style="yellow"))
                continue
            session.answer(item, answer, note=note)
            console.print(Text("skipped" if answer == SKIP else f"labelled {answer}", "dim"))
            break
    console.print(f"done: {session.done} of {session.total} labelled")
    return ReviewOutcome(session.given, quit_early=False)


def add_sample_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a review at the terminal: who reviews and which sample."""
    parser.add_argument(
        "--reviewer",
        metavar="NAME",
        help="who labels (recorded with each label; default: your login name)",
    )
    parser.add_argument(
        "--size",
        type=int,
        metavar="N",
        help="labels to ask per criterion, split between the judge's passes and fails "
        "(default: what --width needs)",
    )
    parser.add_argument(
        "--width",
        type=float,
        metavar="W",
        help="size the sample for a 95%% interval W wide on each judge's agreement (default 0.2)",
    )
    parser.add_argument(
        "--criteria",
        "--criterion",
        action="append",
        metavar="NAME",
        help="only this judged criterion (repeat for more; default: every LLM-judged one)",
    )
    parser.add_argument(
        "--disagreeing-first",
        action="store_true",
        help="first the trials where the judge's samples reached different verdicts",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the sample's seed (the same seed, the same sample)"
    )


def _flag_problem(exc: ValidationError) -> str:
    """The flag a sample setting came from, and what is wrong with it, in a line."""
    error = exc.errors(include_url=False)[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"--{field.replace('_', '-')}: {message}" if field else message


def review_at_terminal(
    args: argparse.Namespace, run_dir: Path, run: RunResult, bank: LabelBank | None
) -> int:
    """Label the run at ``run_dir`` at this terminal (see the module); the exit code."""
    try:
        params = ReviewParams(
            run=str(run_dir),
            size=args.size,
            width=args.width,
            criteria=args.criteria or [],
            disagreeing_first=args.disagreeing_first,
            reviewer=args.reviewer or getpass.getuser(),
            seed=args.seed,
        )
        session = open_review(params, run=run)
    except ValidationError as exc:
        return fail(_flag_problem(exc))
    except InputError as exc:
        return fail(str(exc))
    session.bank = bank
    console = Console(highlight=False)
    try:
        outcome = label_interactively(session, console, KeyReader())
    except KeyboardInterrupt:
        console.print(f"\nstopped: {session.done} of {session.total} labelled")
        outcome = ReviewOutcome(session.given, quit_early=True)
    if session.given:
        measured = session.finish()
        console.print(f"{session.given} label(s) added to {run_dir / LABELS_FILE}")
        for line in [*session.notes, *agreement_lines(measured)]:
            console.print(Text(line))
    if outcome.quit_early and session.done < session.total:
        console.print(f"to go on: agentflow-eval review {shlex.quote(str(run_dir))}")
    return EXIT_OK
