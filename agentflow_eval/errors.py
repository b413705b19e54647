"""The root of every error agentflow-eval raises on purpose, and its families.

A front door catches :class:`AgentflowEvalError` once and maps the family to what the user
sees: bad input is one line and exit 2 with nothing written; a run that stopped says how
to finish it; a provider or a store that failed names itself. Each concrete error keeps
the built-in base it always had (``ValueError``, ``RuntimeError``, ...), so code that
caught those still does.

Faults of the agent under test are not errors of ours: they are recorded in the trial
(``TrialError``) and never raised past it.
"""

from __future__ import annotations

__all__ = [
    "AgentflowEvalError",
    "InputError",
    "ProviderError",
    "RunStopped",
    "StoreError",
]


class AgentflowEvalError(Exception):
    """Something agentflow-eval refused or could not do; the message is one line meant for
    the user."""


class InputError(AgentflowEvalError, ValueError):
    """Bad input, found before anything ran: an eval set, config or results file, an agent
    spec, a flag, a run folder that is in use or holds another run."""


class RunStopped(AgentflowEvalError, RuntimeError):
    """A run that started and cannot go on, or ended on purpose short of success (a gate);
    what it finished is kept."""


class ProviderError(AgentflowEvalError):
    """A model provider failed a call for its own reasons: faults that outlasted the
    retries, or refused credentials. ``reason`` says why (its raiser redacts it: it may
    quote a provider's error body); ``attempts`` counts the requests sent."""

    def __init__(self, reason: str, *, model: str = "", attempts: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.model = model
        self.attempts = attempts


class StoreError(AgentflowEvalError):
    """An object store (a folder or an S3-compatible bucket) failed an operation;
    ``transient`` says whether trying again could help."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient
