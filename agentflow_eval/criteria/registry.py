"""Criteria by name, as they declare themselves.

A built-in criterion declares itself in its own module, with one decorator on the
function that builds it from its options::

    @criterion("tool_trajectory_avg_score", TrajectoryOptions, judges=("expected_tool_trajectory",))
    def build_tool_trajectory(name, options: TrajectoryOptions, config) -> ToolTrajectoryCriterion:
        ...

The declaration (:class:`CriterionSpec`) says what the criterion's options are (its own
pydantic model), whether it calls an LLM judge (its options are judge options), which of
a case's expectations it judges, and whether it needs rubrics; everything that asks
"which criterion does what" (the config's JSON Schema, the config loader, the checks
before a run, the warnings about expectations nothing judges, the run's judge model, the
scorecard) asks the registry. The built-in modules are found by walking this package, so
a module that declares a criterion registers it by existing.

Users add their own criteria with :func:`register` (``agentflow_eval.register_criterion``),
or name one in a config entry as ``function: "module:attr"``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from agentflow_eval.criteria.base import Criterion
from agentflow_eval.criteria.fields import ExpectationField, gives
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import did_you_mean
from agentflow_eval.models.config import CRITERIA_CATALOGUE, CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase

__all__ = [
    "CATALOGUE",
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

CriterionFactory = Callable[[str, CriterionConfig, EvalConfig], Criterion]
"""``(name, criterion_config, eval_config) -> Criterion``."""

Subject = Literal["answer", "tool_calls", "session_state"]
"""What of a trial a criterion looks at, as a scorecard tells a reader: the agent's
answer (its text, intermediate responses, or whether it finished), its tool calls, or its
session state."""

Opts = TypeVar("Opts", bound=CriterionConfig)
C = TypeVar("C", bound=Criterion)

_Build = Callable[[str, Opts, EvalConfig], C]
"""A declared criterion's build function: ``(name, its own options, config)``."""
_FromEntry = Callable[[str, CriterionConfig, EvalConfig], C]
"""The same, taking a config entry as written."""


@dataclass(frozen=True)
class CriterionSpec(Generic[Opts]):
    """What a criterion declares about itself."""

    name: str
    """The config key."""
    options: type[Opts]
    """The model of its config entry: exactly the options it reads."""
    build: Callable[[str, Opts, EvalConfig], Criterion]
    """``(name, options, config) -> Criterion``."""
    judges: tuple[ExpectationField, ...] = ()
    """The case expectations it compares against (an expectation a case gives and no
    criterion of the run judges is named in a warning before the run)."""
    needs_rubrics: bool = False
    """It has nothing to judge without a rubric (in its options, the cases or their turns):
    a run that gives none stops before it starts."""
    intermediate_in_final: bool = False
    """It reads ``include_intermediate_responses_in_final`` (elsewhere that option is
    warned about), and with it judges the expected intermediate responses too."""
    subject: Subject = "answer"
    """What of a trial it looks at."""
    repeatable: bool = False
    """A case may name it more than once, each time with another target (its results
    are told apart by their labels)."""
    description: str = ""
    """What it measures, in a line (the config schema shows it)."""

    @property
    def calls_judge(self) -> bool:
        """Whether it asks an LLM judge: its options are judge options."""
        return issubclass(self.options, JudgeCriterionOptions)

    def options_of(self, entry: CriterionConfig) -> Opts:
        """A config entry read by this criterion's options model (raises pydantic's
        ``ValidationError``, a ``ValueError``, when it does not fit)."""
        if isinstance(entry, self.options):
            return entry
        return self.options.model_validate(entry.written())

    def create(self, name: str, entry: CriterionConfig, config: EvalConfig) -> Criterion:
        """The criterion that config entry ``entry`` describes."""
        return self.build(name, self.options_of(entry), config)


_SPECS: dict[str, CriterionSpec[Any]] = {}


class UnknownCriterion(InputError):
    pass


def _first_paragraph(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def criterion(
    name: str,
    options: type[Opts],
    *,
    judges: tuple[ExpectationField, ...] = (),
    needs_rubrics: bool = False,
    intermediate_in_final: bool = False,
    subject: Subject = "answer",
    repeatable: bool = False,
) -> Callable[[_Build[Opts, C]], _FromEntry[C]]:
    """Declare a criterion: decorates the function that builds it from its own options
    (its docstring's first paragraph says what it measures). The decorated function takes
    any config entry and reads it with ``options`` first (see :class:`CriterionSpec`)."""

    def declare(build: _Build[Opts, C]) -> _FromEntry[C]:
        spec = CriterionSpec(
            name=name,
            options=options,
            build=build,
            judges=judges,
            needs_rubrics=needs_rubrics,
            intermediate_in_final=intermediate_in_final,
            subject=subject,
            repeatable=repeatable,
            description=_first_paragraph(build.__doc__),
        )
        _SPECS[name] = spec

        @functools.wraps(build)
        def from_entry(criterion_name: str, entry: CriterionConfig, config: EvalConfig) -> C:
            return build(criterion_name, spec.options_of(entry), config)

        return from_entry

    return declare


def register(name: str) -> Callable[[CriterionFactory], CriterionFactory]:
    """Register a criterion factory under ``name`` (the config key). The factory gets the
    config entry as a :class:`CriterionConfig` whose own options are attributes as written;
    declare an options model with :func:`criterion` to have them checked."""

    def decorate(factory: CriterionFactory) -> CriterionFactory:
        _SPECS[name] = CriterionSpec(
            name=name,
            options=CriterionConfig,
            build=factory,
            description=_first_paragraph(factory.__doc__),
        )
        return factory

    return decorate


# ---------------------------------------------------------------------- what is declared


def specs() -> list[CriterionSpec[Any]]:
    """Every declared criterion, by name."""
    _load_builtins()
    return [_SPECS[name] for name in sorted(_SPECS)]


def spec_of(name: str) -> CriterionSpec[Any] | None:
    """The declaration of criterion ``name``, if there is one."""
    _load_builtins()
    return _SPECS.get(name)


def known_criteria() -> list[str]:
    _load_builtins()
    return sorted(_SPECS)


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
        from agentflow_eval.criteria.custom import load_custom_criterion

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
    (each is the criterion its ``type`` names, with its fields as options).

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
    return criteria


def default_applies(name: str, case: EvalCase) -> bool:
    """Whether the default criterion ``name`` judges ``case`` (see :func:`build_criteria`):
    always for a case without expectations of its own, else when the case gives one of the
    expectations the criterion judges; never for a component case (its ``output_matches``
    judges it: ADK's defaults are for agents)."""
    if case.component is not None:
        return False
    if not case.expectations:
        return True
    spec = spec_of(name)
    if spec is None or not spec.judges:
        return True
    return any(gives(case, field, as_reference=True) for field in spec.judges)


# ------------------------------------------------------------------------------ discovery

_LOADED = False
_WALKING = False
_LOAD_LOCK = threading.RLock()


def _load_builtins() -> None:
    """Import every module of this package (and its subpackages) once, so that each
    built-in criterion's declaration runs; no list of them is kept anywhere. Another
    thread asking meanwhile waits for the whole list; a module the walk imports that asks
    (on this thread) gets what is declared so far; a walk that fails is tried again."""
    global _LOADED, _WALKING
    if _LOADED:
        return
    with _LOAD_LOCK:
        if _LOADED or _WALKING:
            return
        _WALKING = True
        try:
            package = importlib.import_module(__package__ or "agentflow_eval.criteria")
            for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
                importlib.import_module(module.name)
            _LOADED = True
        finally:
            _WALKING = False
