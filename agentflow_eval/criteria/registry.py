"""Criteria by name: the registry everything that asks "which criterion does what" asks
(the config's JSON Schema, the config loader, the checks before a run, the warnings about
expectations nothing judges, the run's judge model, the scorecard).

It holds, the first time it is asked:

- the built-in criteria, listed in :data:`~agentflow_eval.criteria.builtins.BUILTIN_CRITERIA`;
- the criteria installed packages declare as entry points of the ``agentflow_eval.criteria``
  group, each naming a declaration (a :class:`CriterionSpec`) under the criterion's name::

      [project.entry-points."agentflow_eval.criteria"]
      no_pii = "my_checks.criteria:no_pii"

- and what the process registers with :func:`register` (``agentflow_eval.register_criterion``),
  the call the built-ins and the entry points go through too.

A config entry may also name a function of one's own as ``function: "module:attr"``
(:mod:`agentflow_eval.criteria.custom`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, overload

from agentflow_eval.criteria.base import Criterion
from agentflow_eval.criteria.custom import load_custom_criterion
from agentflow_eval.criteria.fields import ExpectationField, gives
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import (
    CriterionFactory,
    CriterionSpec,
    Subject,
    criterion,
    first_paragraph,
)
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import did_you_mean
from agentflow_eval.models.config import CRITERIA_CATALOGUE, CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.registries import Registry

__all__ = [
    "CATALOGUE",
    "CRITERIA",
    "ENTRY_POINT_GROUP",
    "CriterionFactory",
    "CriterionSpec",
    "Subject",
    "UnknownCriterion",
    "build_criteria",
    "build_criterion",
    "criterion",
    "default_applies",
    "deterministic_first",
    "judge_model",
    "judged_fields",
    "known_criteria",
    "known_llm_criteria",
    "options_model",
    "register",
    "spec_of",
    "specs",
    "unknown_criterion_message",
    "validation_context",
]

ENTRY_POINT_GROUP = "agentflow_eval.criteria"


def _builtin_criteria() -> tuple[CriterionSpec[Any], ...]:
    # imported when the registry is first asked, not with it: the built-in criteria bring
    # nltk and the model client (over a second), and modules that only name the
    # registry's functions are imported by every command
    from agentflow_eval.criteria.builtins import BUILTIN_CRITERIA

    return BUILTIN_CRITERIA


CRITERIA: Registry[CriterionSpec[Any]] = Registry(
    what="criterion",
    group=ENTRY_POINT_GROUP,
    kind=CriterionSpec,
    name_of=lambda spec: spec.name,
    builtins=_builtin_criteria,
)
"""Every criterion there is, by name."""


class UnknownCriterion(InputError):
    pass


@overload
def register(spec: CriterionSpec[Any], /) -> CriterionSpec[Any]: ...


@overload
def register(name: str, /) -> Callable[[CriterionFactory], CriterionFactory]: ...


def register(
    spec_or_name: CriterionSpec[Any] | str, /
) -> CriterionSpec[Any] | Callable[[CriterionFactory], CriterionFactory]:
    """Register a criterion; a name registered again replaces the criterion it named.

    Given a declaration (a function decorated with :func:`criterion`, or a
    :class:`CriterionSpec`), registers it as it is: its options are checked when the
    config loads. Given a name, returns a decorator that registers a factory
    ``(name, config_entry, config) -> Criterion`` under it; the factory gets its config
    entry as a :class:`CriterionConfig` whose own options are attributes as written."""
    if isinstance(spec_or_name, CriterionSpec):
        return CRITERIA.add(spec_or_name)
    name = spec_or_name

    def decorate(factory: CriterionFactory) -> CriterionFactory:
        CRITERIA.add(
            CriterionSpec(
                name=name,
                options=CriterionConfig,
                build=factory,
                description=first_paragraph(factory.__doc__),
            )
        )
        return factory

    return decorate


# ---------------------------------------------------------------------- what is declared


def specs() -> list[CriterionSpec[Any]]:
    """Every declared criterion, by name."""
    return sorted(CRITERIA.items(), key=lambda spec: spec.name)


def spec_of(name: str) -> CriterionSpec[Any] | None:
    """The declaration of criterion ``name``, if there is one."""
    return CRITERIA.get(name)


def known_criteria() -> list[str]:
    return CRITERIA.names()


def known_llm_criteria() -> frozenset[str]:
    """The declared criteria that call an LLM judge."""
    return frozenset(spec.name for spec in specs() if spec.calls_judge)


def deterministic_first(chosen: Iterable[CriterionSpec[Any]]) -> list[str]:
    """The names of ``chosen``, the deterministic criteria first, each kind by name."""
    return [spec.name for spec in sorted(chosen, key=lambda s: (s.calls_judge, s.name))]


def options_model(name: str, entry: Any) -> type[CriterionConfig]:
    """The model that reads config entry ``name``: a ``function`` entry's is
    :class:`CriterionOptions`, a declared criterion's its own; an unknown name's entry is
    kept as written (building it fails, naming the criteria there are)."""
    function = entry.function if isinstance(entry, CriterionConfig) else None
    if isinstance(entry, Mapping):
        function = entry.get("function")
    if function:
        return CriterionOptions
    spec = spec_of(name)
    return spec.options if spec is not None else CriterionConfig


def judged_fields(name: str, entry: CriterionConfig) -> frozenset[ExpectationField]:
    """The case expectations config entry ``name`` judges (nothing for an entry of one's
    own: it may read anything)."""
    spec = spec_of(name)
    if spec is None or entry.function:
        return frozenset()
    fields = set(spec.judges)
    if spec.intermediate_in_final:
        options = spec.options_of(entry)
        if getattr(options, "include_intermediate_responses_in_final", False):
            fields.add("expected_intermediate_responses")
    return frozenset(fields)


def judge_model(name: str, entry: CriterionConfig) -> str | None:
    """The judge model config entry ``name`` names itself, if any (the run's
    ``judge.model`` serves the others)."""
    spec = spec_of(name)
    if spec is not None and spec.calls_judge and not entry.function:
        options = spec.options_of(entry)
        return options.judge_model if isinstance(options, JudgeCriterionOptions) else None
    given = getattr(entry, "judge_model", None)
    return given if isinstance(given, str) else None


class _Catalogue:
    """The registry as reading a config needs it
    (:class:`~agentflow_eval.models.config.CriteriaCatalogue`)."""

    def options_model(self, name: str, entry: Any) -> type[CriterionConfig]:
        return options_model(name, entry)

    def entry_warnings(self, name: str, entry: Mapping[str, Any]) -> list[str]:
        given = entry.get(
            "include_intermediate_responses_in_final",
            entry.get("includeIntermediateResponsesInFinal"),
        )
        spec = spec_of(name)
        if given is not True or (spec is not None and spec.intermediate_in_final):
            return []
        declared = specs()
        readers = deterministic_first(s for s in declared if s.intermediate_in_final)
        judges = deterministic_first(
            s for s in declared if "expected_intermediate_responses" in s.judges
        )
        return [
            "include_intermediate_responses_in_final has no effect on this criterion (as in "
            f"ADK, only {' and '.join(readers)} read it); {' and '.join(judges)} judges "
            "intermediate responses"
        ]


CATALOGUE = _Catalogue()
"""The registry as config loading asks it."""


def validation_context() -> dict[str, Any]:
    """The validation context under which ``EvalConfig.model_validate`` reads each
    criterion's options with its own model."""
    return {CRITERIA_CATALOGUE: CATALOGUE}


# ------------------------------------------------------------------------------ building


def build_criterion(name: str, options: CriterionConfig, config: EvalConfig) -> Criterion:
    if options.function:
        return load_custom_criterion(name, options, config)
    spec = spec_of(name)
    if spec is None:
        raise UnknownCriterion(unknown_criterion_message(name))
    return spec.create(name, options, config)


def unknown_criterion_message(name: str) -> str:
    """``unknown criterion 'response_match_scor'; expected one of ..., or an entry with
    function: 'module:attr'; did you mean 'response_match_score'?``: the list, and the
    near match where there is one."""
    known = known_criteria()
    return (
        f"unknown criterion {name!r}; expected one of {', '.join(known)}, or an entry with "
        f"function: 'module:attr'{did_you_mean(name, known)}"
    )


def build_criteria(config: EvalConfig, case: EvalCase) -> list[Criterion]:
    """The criteria that judge ``case``: the config's, then the case's own expectations
    (each is the criterion its ``type`` names, with its fields as options), then each
    criterion declared to judge unasked (``judges_unasked``: ``end_state_match``) that
    the config does not name, where the case gives what it judges.

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
        options = CriterionConfig(**expectation.model_dump(exclude={"type"}))
        criteria.append(build_criterion(expectation.type, options, config))
    for spec in specs():
        unasked = spec.judges_unasked and spec.name not in config.criteria
        if unasked and any(gives(case, field) for field in spec.judges):
            criteria.append(spec.create(spec.name, CriterionConfig(), config))
    return criteria


def default_applies(name: str, case: EvalCase) -> bool:
    """Whether the default criterion ``name`` judges ``case`` (see :func:`build_criteria`):
    always for a case without expectations of its own, else when the case gives one of the
    expectations the criterion judges; never for a component case (its ``output_matches``
    judges it: ADK's defaults are for agents)."""
    if case.component is not None:
        return False
    if not case.expectations and not case.end_state:
        return True
    spec = spec_of(name)
    if spec is None or not spec.judges:
        return True
    return any(gives(case, field, as_reference=True) for field in spec.judges)
