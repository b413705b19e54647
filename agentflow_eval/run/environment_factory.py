"""The function that sets up each trial's environment, loaded when the run is planned.

The run's environment is the config's ``environment``, else the eval set's
(:class:`~agentflow_eval.models.environment_spec.EnvironmentSpec`). Its function is
imported as agent specs are (:func:`~agentflow_eval.agents.loader.load_callable`) and
checked against its options before any run folder exists: a function that does not
import, or cannot take the options given, is bad input (one line naming the file and
the field). Called for a trial (:meth:`EnvironmentFactory.manager`), it returns a
context manager, sync or async, that yields the trial's
:class:`~agentflow_eval.environments.environment.Environment`
(:mod:`agentflow_eval.run.trial_environment` runs it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.agents.loader import load_callable
from agentflow_eval.agents.threads import AgentThreads
from agentflow_eval.environments.environment import TrialInfo
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.environment_spec import EnvironmentSpec
from agentflow_eval.models.evalset import EvalSet

__all__ = ["TRIAL_PARAMETER", "EnvironmentFactory", "load_environment"]

TRIAL_PARAMETER = "trial"
"""The parameter an environment function names to be given the trial's
:class:`~agentflow_eval.environments.environment.TrialInfo`."""


@dataclass(frozen=True, eq=False)
class EnvironmentFactory:
    """A loaded environment function and the options it is called with."""

    spec: str
    fn: Callable[..., Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    takes_trial: bool = False
    threads: AgentThreads = field(default_factory=lambda: AgentThreads(name="environment"))
    """Where a synchronous context manager's setup and teardown run: daemon threads, so
    one that hangs holds neither the event loop nor the process's exit."""

    @classmethod
    def of(
        cls, spec: str, fn: Callable[..., Any], options: Mapping[str, Any]
    ) -> EnvironmentFactory:
        """The factory calling ``fn`` with ``options``; raises ``TypeError`` saying why
        ``fn`` cannot take them (an unknown option, a required parameter left out)."""
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            return cls(spec=spec, fn=fn, options=dict(options))
        takes_trial = TRIAL_PARAMETER in signature.parameters or any(
            p.kind is p.VAR_KEYWORD for p in signature.parameters.values()
        )
        if TRIAL_PARAMETER in options:
            raise TypeError(f"the option {TRIAL_PARAMETER!r} is the trial's own; rename it")
        given = {**options, TRIAL_PARAMETER: None} if takes_trial else dict(options)
        try:
            signature.bind(**given)
        except TypeError as exc:
            raise TypeError(f"it cannot be called with its options: {exc}") from None
        return cls(spec=spec, fn=fn, options=dict(options), takes_trial=takes_trial)

    def manager(self, trial: TrialInfo) -> Any:
        """What the function returns for ``trial`` (a context manager, if it is right)."""
        extra = {TRIAL_PARAMETER: trial} if self.takes_trial else {}
        return self.fn(**self.options, **extra)


def load_environment(
    eval_set: EvalSet, config: EvalConfig, *, evalset_source: object, config_source: object
) -> EnvironmentFactory | None:
    """The run's environment function: the config's ``environment``, else the eval
    set's; ``None`` when neither names one. ``*_source`` names each file in errors.
    Raises :class:`EvalFileError` when the function cannot be used."""
    chosen: tuple[EnvironmentSpec, object] | None = None
    if config.environment is not None:
        chosen = (config.environment, config_source)
    elif eval_set.environment is not None:
        chosen = (eval_set.environment, evalset_source)
    if chosen is None:
        return None
    spec, source = chosen
    try:
        fn = load_callable(spec.function)
        return EnvironmentFactory.of(spec.function, fn, spec.options)
    except InputError as exc:
        message = str(exc)
    except TypeError as exc:
        message = f"{spec.function!r}: {exc}"
    raise EvalFileError.from_problems(str(source), [Problem(message=message, field="environment")])
