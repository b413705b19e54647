"""What a reviewer reads of one sampled trial, as Markdown: the Prefect UI's Resume dialog
shows it above the review form. The case and the trial, the criterion, the conversation
(what the user said, the tool calls with their arguments and results, what the agent
said), the answer beside the reference, and the judge's verdict, score, threshold and
reasoning.

Everything the run recorded is data, never markup: texts (what was said, the answers,
the reasoning) are escaped line by line into block quotes that wrap; JSON (a tool call's
arguments and result) goes in fenced blocks longer than any run of backticks it holds."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentflow_eval.models.results import RunResult
from agentflow_eval.report.markdown import agreement_markdown, md_text
from agentflow_eval.review.items import ReviewItem, ReviewTurn
from agentflow_eval.review.labels import Label
from agentflow_eval.review.sampling import ReviewPlan

__all__ = ["fenced", "item_markdown", "quoted", "review_markdown"]

_BACKTICKS = re.compile(r"`+")
RESULT_CHARS = 2000
"""A tool result longer than this is cut (the run's report has it whole)."""


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a fenced block that nothing inside it can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def quoted(text: str) -> str:
    """``text`` as a block quote that wraps in the dialog: each line escaped (run data,
    never markup), a paragraph of its own."""
    lines = [md_text(line) for line in text.splitlines() if line.strip()]
    return "\n>\n".join(f"> {line}" for line in lines) if lines else "> _(empty)_"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _cut(text: str, limit: int = RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more)"


def _turn_lines(number: int, turn: ReviewTurn, *, last: bool) -> list[str]:
    """A turn of the conversation; the last turn's answer and reference are shown with
    the answer below, not here."""
    lines = [f"**User** (turn {number})", "", quoted(turn.user_text), ""]
    for call in turn.tool_calls:
        lines += [f"**Tool call** `{call.name.replace('`', '')}`", ""]
        lines += [fenced(_json(call.args), "json"), ""]
        if call.error:
            lines += ["It failed:", "", quoted(_cut(call.error)), ""]
        else:
            lines += ["It returned:", "", fenced(_cut(_json(call.result)), "json"), ""]
    if last:
        return lines
    lines += ["**Agent**", "", quoted(turn.answer) if turn.answer else "_(no answer)_", ""]
    if turn.reference:
        lines += ["**Reference** for this turn", "", quoted(turn.reference), ""]
    return lines


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def item_markdown(item: ReviewItem, *, position: int, total: int) -> str:
    """``item`` as the review form's description: "Trial 3 of 20", then what the
    reviewer needs to judge it as the judge did."""
    criterion = md_text(item.criterion)
    label = md_text(item.criterion_label)
    lines = [
        f"## {position} of {total}: case `{item.case_id.replace('`', '')}`, trial {item.trial + 1}",
        "",
        f"**Criterion:** {criterion}" + (f" ({label})" if label != criterion else ""),
        "",
    ]
    if item.trial_error:
        lines += [f"> The trial did not finish: {md_text(item.trial_error)}", ""]
    lines += ["### Conversation", ""]
    for number, turn in enumerate(item.conversation, start=1):
        lines += _turn_lines(number, turn, last=number == len(item.conversation))
    lines += ["### Answer and reference", "", "**Final answer**", ""]
    lines += [quoted(item.final_answer) if item.final_answer else "_(none)_", ""]
    lines += ["**Reference**", ""]
    lines += [
        quoted(item.reference_answer) if item.reference_answer else "_(the case gives none)_",
        "",
    ]
    samples = "disagreed" if item.samples_disagreed else "agreed"
    lines += [
        "### The judge",
        "",
        "| Verdict | Score | Threshold | Its samples |",
        "|---|---:|---:|---|",
        f"| **{item.verdict}** | {_score(item.score)} | {_score(item.threshold)} | {samples} |",
        "",
    ]
    if item.reasoning:
        lines += ["**Reasoning**", ""]
        for reasoning in item.reasoning:
            lines += [quoted(reasoning), ""]
    elif item.reason:
        lines += ["**Reason**", "", quoted(item.reason), ""]
    low, high = item.score_range
    scale = (low, high) != (0.0, 1.0)
    lines += [
        "---",
        "",
        f"**Your verdict** on {criterion}, not the judge's"
        + (f": your score on its scale, {low:g} to {high:g}" if scale else ": pass or fail")
        + " (skip if you cannot tell).",
    ]
    return "\n".join(lines)


def _label_text(label: Label) -> str:
    return label.label if isinstance(label.label, str) else f"{label.label:g}"


def review_markdown(plan: ReviewPlan, labels: Sequence[Label], run: RunResult) -> str:
    """A review's outcome (the review flow's artifact): the judges against the people
    who labelled their verdicts, then the sample, each trial with the judge's verdict
    and each reviewer's label of it."""
    by_trial: dict[tuple[str, int, str], list[Label]] = {}
    for label in labels:
        by_trial.setdefault((label.case_id, label.trial, label.criterion), []).append(label)
    reviewers = sorted({label.reviewer for label in labels})
    lines = [
        f"# Review of run `{plan.run_id.replace('`', '')}`",
        *(agreement_markdown(run) or ["", "No judge has labels to be measured against yet."]),
        "",
        "## The sample",
        "",
        md_text(plan.needed_for_width),
        "",
        "| Case | Trial | Criterion | Judge | Score | "
        + "".join(f"{md_text(name)} | " for name in reviewers),
        "|---|---:|---|---|---:|" + "---|" * len(reviewers),
    ]
    for item in plan.items:
        given = {label.reviewer: label for label in by_trial.get(item.key, [])}
        cells = [
            md_text(item.case_id),
            str(item.trial + 1),
            md_text(item.criterion),
            item.verdict,
            _score(item.score),
            *(_label_text(given[name]) if name in given else "–" for name in reviewers),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
