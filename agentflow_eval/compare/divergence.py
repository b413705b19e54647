"""Where a case's trajectories part ways between the baseline and the candidate.

For a case that regressed, the question after "did it get worse" is "what does it do
differently". Each side's trials took paths: the tools they called, in order, over every
turn (``TrialFigures.tool_path``), and, where the framework records them, the nodes they
visited (``node_path``). Every trial counts, errored ones with the path they took before
they stopped (a crash after a wrong call is part of the story).

Each side's most common path is found (ties: the one first seen); the divergence is the
first step (1-based) where those two paths differ, a path that has ended reading as
``(end)``. At that step, what each side's trials called there: the distribution the
reader compares ("step 2: lookup_order 10/10 → 4/10, refund 0/10 → 6/10"). When the
most common paths agree there is no step, and the paths are still shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from agentflow_eval.compare.models import PathDivergence, StepCount
from agentflow_eval.models.results import TrialFigures

__all__ = ["END", "case_divergence", "path_divergence"]

END = "(end)"
"""What a trial whose path had ended called at a step."""


def _most_common(paths: Sequence[tuple[str, ...]]) -> tuple[tuple[str, ...], int]:
    # Counter.most_common keeps first-seen order among equal counts
    path, count = Counter(paths).most_common(1)[0]
    return path, count


def _at(path: Sequence[str], index: int) -> str:
    return path[index] if index < len(path) else END


def path_divergence(
    kind: Literal["tool", "node"],
    baseline: Sequence[Sequence[str]],
    candidate: Sequence[Sequence[str]],
) -> PathDivergence | None:
    """Where the ``candidate`` paths part from the ``baseline`` paths (None: a side has
    no trial)."""
    if not baseline or not candidate:
        return None
    before = [tuple(path) for path in baseline]
    after = [tuple(path) for path in candidate]
    modal_b, count_b = _most_common(before)
    modal_c, count_c = _most_common(after)
    divergence = PathDivergence(
        kind=kind,
        baseline_trials=len(before),
        candidate_trials=len(after),
        baseline_path=list(modal_b),
        baseline_path_trials=count_b,
        candidate_path=list(modal_c),
        candidate_path_trials=count_c,
    )
    step = next(
        (
            index
            for index in range(max(len(modal_b), len(modal_c)))
            if _at(modal_b, index) != _at(modal_c, index)
        ),
        None,
    )
    if step is None:
        return divergence
    divergence.step = step + 1
    called_b = Counter(_at(path, step) for path in before)
    called_c = Counter(_at(path, step) for path in after)
    names = sorted(
        set(called_b) | set(called_c),
        key=lambda name: (-called_c[name], -called_b[name], name),
    )
    divergence.calls = [
        StepCount(name=n, baseline=called_b[n], candidate=called_c[n]) for n in names
    ]
    return divergence


def case_divergence(
    baseline: Sequence[TrialFigures], candidate: Sequence[TrialFigures]
) -> list[PathDivergence]:
    """A case's divergence in tools called and, where both sides recorded nodes, in
    nodes visited."""
    found: list[PathDivergence] = []
    tools = path_divergence(
        "tool", [f.tool_path for f in baseline], [f.tool_path for f in candidate]
    )
    if tools is not None:
        found.append(tools)
    nodes = path_divergence(
        "node",
        [f.node_path for f in baseline if f.node_path is not None],
        [f.node_path for f in candidate if f.node_path is not None],
    )
    if nodes is not None:
        found.append(nodes)
    return found
