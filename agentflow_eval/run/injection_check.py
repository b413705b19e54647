"""Injected instructions checked before a run: every tool mock's ``inject`` that names a
payload by id must name one the run knows (the package's set or the config's
``injection_payloads``). A typo found here is one line naming file, case and field, not
a trial error in every trial of the case."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.models.injection import InjectionPayload, payload_catalogue
from agentflow_eval.models.tool_mocks import ToolMock

__all__ = ["check_injections"]


def check_injections(
    eval_set: EvalSet,
    config: EvalConfig,
    evalset_file: str | Path,
    config_file: str | Path | None,
) -> None:
    """Raise :class:`EvalFileError` (the config's problems first, then the eval set's)
    for every ``inject`` naming an unknown payload."""
    catalogue = payload_catalogue(config.injection_payloads)
    in_config = _unknown(config.tool_mocks, catalogue, "tool_mocks", None)
    if in_config:
        raise EvalFileError.from_problems(config_file or "(config)", in_config)
    problems: list[Problem] = []
    for case in eval_set.eval_cases:
        problems += _unknown(case.tool_mocks, catalogue, "tool_mocks", case.eval_id)
        for t, turn in enumerate(case.conversation):
            where = f"conversation[{t}].tool_mocks"
            problems += _unknown(turn.tool_mocks, catalogue, where, case.eval_id)
    if problems:
        raise EvalFileError.from_problems(evalset_file, problems)


def _unknown(
    mocks: Sequence[ToolMock],
    catalogue: Mapping[str, InjectionPayload],
    where: str,
    case_id: str | None,
) -> list[Problem]:
    problems = []
    for i, mock in enumerate(mocks):
        if isinstance(mock.inject, str) and mock.inject not in catalogue:
            problems.append(
                Problem(
                    message=(
                        f"unknown injection payload {mock.inject!r}; expected one of "
                        f"{', '.join(sorted(catalogue))}, or add it to the config's "
                        "injection_payloads"
                    ),
                    field=f"{where}[{i}].inject",
                    case_id=case_id,
                )
            )
    return problems
