"""The functions a run's end-state checks call (``"check": "module:attr"``), loaded when
the run is planned, as component targets are: one that does not import, is not a
function or cannot take the trial's environment and the check's options is bad input,
refused before any run folder exists (one line naming file, case and field)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from agentflow_eval.agents.loader import load_callable
from agentflow_eval.environments.environment import Environment
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.models.evalset import EvalSet

__all__ = ["load_check_functions"]


def load_check_functions(eval_set: EvalSet, source: object) -> dict[str, Callable[..., Any]]:
    """The function of every ``check`` of ``eval_set``'s end-state checks, by spec
    (``source`` names the eval set in errors). Raises :class:`EvalFileError` with a
    problem per check that cannot be called."""
    loaded: dict[str, Callable[..., Any] | str] = {}
    problems: list[Problem] = []
    for case in eval_set.eval_cases:
        for index, check in enumerate(case.end_state):
            if check.check is None:
                continue
            spec = check.check
            if spec not in loaded:
                try:
                    loaded[spec] = load_callable(spec)
                except InputError as exc:
                    loaded[spec] = str(exc)
            fn = loaded[spec]
            why = fn if isinstance(fn, str) else _unfit(fn, check.options)
            if why is not None:
                problems.append(
                    Problem(message=why, field=f"end_state[{index}].check", case_id=case.eval_id)
                )
    if problems:
        raise EvalFileError.from_problems(str(source), problems)
    return {spec: fn for spec, fn in loaded.items() if not isinstance(fn, str)}


def _unfit(fn: Callable[..., Any], options: dict[str, Any]) -> str | None:
    """Why ``fn`` cannot be called with an environment and ``options``, or ``None``."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(Environment(), **options)
    except TypeError as exc:
        return f"it cannot be called with the trial's environment and its options: {exc}"
    return None
