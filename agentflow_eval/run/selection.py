"""A subset of an eval set's cases: those whose id matches a pattern, the first N.

``agentflow-eval run --case 'weather_*' --limit 2`` (and the flow's ``cases``/``limit``
parameters) evaluate only part of an eval set, to try a change on a few cases before
the whole set. Patterns are shell-style (``fnmatch``: ``*``, ``?``, ``[abc]``) and match
the whole case id, case-sensitively; a case is kept when any pattern matches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from agentflow_eval.models.evalset import EvalSet

__all__ = ["describe_selection", "select_cases", "shard_of"]


def select_cases(
    eval_set: EvalSet, patterns: Sequence[str] | None = None, limit: int | None = None
) -> EvalSet:
    """``eval_set`` with only the cases whose id matches one of ``patterns`` (all cases
    when there are none), then only the first ``limit`` of them, in file order.

    Raises ``ValueError`` when no case is left, naming the patterns and a few case ids.
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    cases = list(eval_set.eval_cases)
    if patterns:
        cases = [c for c in cases if any(fnmatchcase(c.eval_id, p) for p in patterns)]
        if not cases:
            ids = [c.eval_id for c in eval_set.eval_cases]
            sample = ", ".join(ids[:5]) + (f", … ({len(ids)} in all)" if len(ids) > 5 else "")
            raise ValueError(
                f"no case of eval set {eval_set.eval_set_id!r} matches "
                f"{' or '.join(repr(p) for p in patterns)}; its cases: {sample}"
            )
    if limit is not None:
        cases = cases[:limit]
    if len(cases) == len(eval_set.eval_cases):
        return eval_set
    return eval_set.model_copy(update={"eval_cases": cases})


def describe_selection(
    selected: EvalSet, total: int, patterns: Sequence[str] | None, limit: int | None
) -> str:
    """The note a subset run carries: ``subset: 2 of 10 cases (case 'weather_*', limit 2)``."""
    how = [f"case {p!r}" for p in patterns or ()]
    if limit is not None:
        how.append(f"limit {limit}")
    return f"subset: {len(selected.eval_cases)} of {total} cases ({', '.join(how)})"


def shard_of(eval_set: EvalSet, index: int, count: int) -> EvalSet:
    """The cases of shard ``index`` of ``count``: every ``count``-th case from ``index``
    (interleaved, so long and short cases spread evenly). The eval set keeps its id."""
    if not 0 <= index < count:
        raise ValueError(f"shard {index} of {count} does not exist")
    cases = eval_set.eval_cases[index::count]
    return eval_set.model_copy(update={"eval_cases": cases})
