"""Criteria by name. Built-ins register themselves with :func:`register`; a config entry
with ``function: "module:attr"`` names a user's own criterion."""

from __future__ import annotations

from collections.abc import Callable

from agentflow_eval.criteria.base import Criterion
from agentflow_eval.errors import InputError
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import CallsTool, Completes, EvalCase, FinalContains

__all__ = [
    "LLM_JUDGE_CRITERIA",
    "CriterionFactory",
    "UnknownCriterion",
    "build_criteria",
    "default_applies",
    "known_criteria",
    "known_llm_criteria",
    "register",
]

LLM_JUDGE_CRITERIA = frozenset(
    {
        "final_response_match_v2",
        "rubric_based_final_response_quality_v1",
        "rubric_based_tool_use_quality_v1",
        "hallucinations_v1",
        "safety_v1",
    }
)
"""Built-in criteria that call an LLM judge."""

CriterionFactory = Callable[[str, CriterionConfig, EvalConfig], Criterion]
"""``(name, criterion_config, eval_config) -> Criterion``."""

_FACTORIES: dict[str, CriterionFactory] = {}


class UnknownCriterion(InputError):
    pass


def register(name: str) -> Callable[[CriterionFactory], CriterionFactory]:
    """Register a criterion factory under ``name`` (the config key)."""

    def decorate(factory: CriterionFactory) -> CriterionFactory:
        _FACTORIES[name] = factory
        return factory

    return decorate


def known_criteria() -> list[str]:
    _load_builtins()
    return sorted(_FACTORIES)


def known_llm_criteria() -> frozenset[str]:
    return LLM_JUDGE_CRITERIA


def build_criterion(name: str, options: CriterionConfig, config: EvalConfig) -> Criterion:
    _load_builtins()
    if options.function:
        from agentflow_eval.criteria.custom import load_custom_criterion

        return load_custom_criterion(name, options, config)
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownCriterion(
            f"unknown criterion {name!r}; expected one of {', '.join(known_criteria())}, "
            "or an entry with function: 'module:attr'"
        )
    return factory(name, options, config)


def build_criteria(config: EvalConfig, case: EvalCase) -> list[Criterion]:
    """The criteria that judge ``case``: the config's, then the case's own expectations.

    A criterion the config holds only as a default (:meth:`EvalConfig.default`, no config
    given) judges a case with no expectations of its own as Google ADK would; a case with
    expectations gets it only when the case gives what it compares against (an expected
    tool trajectory, an expected final response), so an expectation-only case is judged
    on what it asked for and nothing else."""
    criteria = [
        build_criterion(name, opts, config)
        for name, opts in config.criteria.items()
        if not opts.defaulted or default_applies(name, case)
    ]
    for expectation in case.expectations:
        if isinstance(expectation, Completes):
            opts = CriterionConfig()
            name = "completes"
        elif isinstance(expectation, CallsTool):
            opts = CriterionConfig(name=expectation.name)
            name = "calls_tool"
        elif isinstance(expectation, FinalContains):
            opts = CriterionConfig(text=expectation.text, case_sensitive=expectation.case_sensitive)
            name = "final_contains"
        else:  # pragma: no cover - the union is closed
            raise TypeError(expectation)
        criteria.append(build_criterion(name, opts, config))
    return criteria


def _gives_trajectory(case: EvalCase) -> bool:
    # an empty list written out (ADK's tool_uses: []) says "no tool calls", and counts
    return any(
        inv.expected_tool_trajectory or "expected_tool_trajectory" in inv.model_fields_set
        for inv in case.conversation
    )


def _gives_final_response(case: EvalCase) -> bool:
    return any(
        inv.expected_final_response is not None and inv.expected_final_response.text
        for inv in case.conversation
    )


_REFERENCE_OF: dict[str, Callable[[EvalCase], bool]] = {
    "tool_trajectory_avg_score": _gives_trajectory,
    "response_match_score": _gives_final_response,
}
"""For each default criterion, whether a case gives what it compares against."""


def default_applies(name: str, case: EvalCase) -> bool:
    """Whether the default criterion ``name`` judges ``case`` (see :func:`build_criteria`)."""
    if not case.expectations:
        return True
    gives = _REFERENCE_OF.get(name)
    return gives(case) if gives is not None else True


def _load_builtins() -> None:
    """Import the modules whose ``@register`` calls fill the registry."""
    from agentflow_eval.criteria import builtins  # noqa: F401
