"""What a criterion declares about itself (:class:`CriterionSpec`), and the decorator that
declares one on the function building it from its options::

    @criterion("tool_trajectory_avg_score", TrajectoryOptions, judges=("expected_tool_trajectory",))
    def build_tool_trajectory(name, options: TrajectoryOptions, config) -> ToolTrajectoryCriterion:
        ...

The declaration says what the criterion's options are (its own pydantic model), whether
it calls an LLM judge (its options are judge options), which of a case's expectations it
judges, and whether it needs rubrics. Declaring registers nothing: the built-in
declarations are listed in :mod:`agentflow_eval.criteria.builtins`, and a package's own
go to :func:`agentflow_eval.register_criterion` or its ``agentflow_eval.criteria`` entry
points (:mod:`agentflow_eval.criteria.registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from agentflow_eval.criteria.base import Criterion
from agentflow_eval.criteria.fields import ExpectationField
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.models.config import CriterionConfig, EvalConfig

__all__ = ["CriterionFactory", "CriterionSpec", "Subject", "criterion", "first_paragraph"]

CriterionFactory = Callable[[str, CriterionConfig, EvalConfig], Criterion]
"""``(name, criterion_config, eval_config) -> Criterion``."""

Subject = Literal["answer", "tool_calls", "session_state", "end_state"]
"""What of a trial a criterion looks at, as a scorecard tells a reader: the agent's
answer (its text, intermediate responses, or whether it finished), its tool calls, its
session state, or the world it left (the end state of its environment)."""

Opts = TypeVar("Opts", bound=CriterionConfig)


@dataclass(frozen=True)
class CriterionSpec(Generic[Opts]):
    """What a criterion declares about itself. Called as a factory
    (``spec(name, config_entry, config)``), it builds the criterion from a config entry
    as written, read with its options model first."""

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
    judges_unasked: bool = False
    """A case that gives what it judges is judged by it even when the config does not
    name it (a case's end-state checks are its own expectations)."""

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

    def __call__(self, name: str, entry: CriterionConfig, config: EvalConfig) -> Criterion:
        return self.create(name, entry, config)


def first_paragraph(text: str | None) -> str:
    """A docstring's first paragraph on one line."""
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
    judges_unasked: bool = False,
) -> Callable[[Callable[[str, Opts, EvalConfig], Criterion]], CriterionSpec[Opts]]:
    """Declare a criterion on the function that builds it from its own options (its
    docstring's first paragraph says what it measures): the decorated name is the
    declaration, a :class:`CriterionSpec` (see there for ``judges`` and the rest)."""

    def declare(build: Callable[[str, Opts, EvalConfig], Criterion]) -> CriterionSpec[Opts]:
        return CriterionSpec(
            name=name,
            options=options,
            build=build,
            judges=judges,
            needs_rubrics=needs_rubrics,
            intermediate_in_final=intermediate_in_final,
            subject=subject,
            repeatable=repeatable,
            description=first_paragraph(build.__doc__),
            judges_unasked=judges_unasked,
        )

    return declare
