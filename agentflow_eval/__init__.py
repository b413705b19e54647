"""agentflow-eval: evaluation for LLM agents, run as Prefect flows.

The public API, importable from the package itself::

    from agentflow_eval import AgentEvaluator, EvalConfig, load_evalset

- run an evaluation: :class:`AgentEvaluator` (pytest), :func:`evaluate` (the pipeline in
  one call; its keyword settings are :class:`RunRequest`'s fields), :func:`rejudge` (a
  finished run's trials judged again), or a :class:`RunRequest` built by hand and run by
  :func:`execute`, the one call every front door ends in; what a run raises:
  :class:`EvaluationFailed`,
  :class:`RegressionFound`, and every deliberate error's root :class:`AgentflowEvalError`;
- inputs: :class:`EvalSet`, :class:`EvalCase`, :class:`Invocation`, :class:`Message`,
  :class:`ToolCall`, :class:`EvalConfig`, :class:`CriterionConfig`, and the loaders
  :func:`load_evalset`, :func:`load_config`;
- agents: :class:`PythonAgent`, :class:`LiteLLMAgent`, :class:`HttpAgent`,
  :func:`load_agent`, and what an agent of one's own implements (:class:`AgentUnderTest`,
  :class:`AgentSession`, :class:`SessionContext`, :class:`TrajectoryRecorder`);
- each trial's own environment: what an environment function yields
  (:class:`Environment`) and is told (:class:`TrialInfo`);
- things of one's own, each registered where the built-ins are listed: criteria
  (:func:`register_criterion`, the :func:`criterion` declaration, :class:`CriterionSpec`),
  framework adapters (:func:`register_adapter`, :class:`FrameworkAdapter`), stores
  (:func:`register_store`, :class:`StoreForm`), a provider's exceptions
  (:func:`add_provider_exception`); for a criterion: :class:`Criterion`,
  :class:`CriterionContext`, and the verdict helpers :func:`scored`, :func:`not_evaluated`,
  :func:`skipped`;
- results: :class:`RunResult`, :class:`CaseResult`, :class:`TrialResult`,
  :class:`CriterionResult`;
- model calls: :class:`ModelClient`.

Names load on first use, so ``import agentflow_eval`` stays cheap; everything else lives in
the subpackages (see docs/architecture.md). The Prefect flows are in
``agentflow_eval.flows``.
"""

from __future__ import annotations

import importlib
import os as _os
from typing import TYPE_CHECKING, Any

# litellm fetches its model price map over the network at import unless told otherwise;
# evaluation must work offline, so use the bundled copy unless the user chose.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Every name, the version too, loads on first use: the pytest plugin imports this package
# in every pytest session of every project.
_EXPORTS: dict[str, tuple[str, str]] = {
    "__version__": ("agentflow_eval.version", "__version__"),
    "AgentEvaluator": ("agentflow_eval.evaluator", "AgentEvaluator"),
    "EvaluationFailed": ("agentflow_eval.evaluator", "EvaluationFailed"),
    "RegressionFound": ("agentflow_eval.evaluator", "RegressionFound"),
    "AgentflowEvalError": ("agentflow_eval.errors", "AgentflowEvalError"),
    "evaluate": ("agentflow_eval.pipeline.evaluate", "evaluate"),
    "rejudge": ("agentflow_eval.pipeline.evaluate", "rejudge"),
    "RunRequest": ("agentflow_eval.models.request", "RunRequest"),
    "execute": ("agentflow_eval.pipeline.execute", "execute"),
    "EvalSet": ("agentflow_eval.models.evalset", "EvalSet"),
    "EvalCase": ("agentflow_eval.models.evalset", "EvalCase"),
    "Invocation": ("agentflow_eval.models.evalset", "Invocation"),
    "Message": ("agentflow_eval.models.evalset", "Message"),
    "ToolCall": ("agentflow_eval.models.evalset", "ToolCall"),
    "EvalConfig": ("agentflow_eval.models.config", "EvalConfig"),
    "CriterionConfig": ("agentflow_eval.models.config", "CriterionConfig"),
    "load_evalset": ("agentflow_eval.files.loading", "load_evalset"),
    "load_config": ("agentflow_eval.criteria.config_files", "load_config"),
    "PythonAgent": ("agentflow_eval.agents.python", "PythonAgent"),
    "LiteLLMAgent": ("agentflow_eval.agents.litellm_agent", "LiteLLMAgent"),
    "HttpAgent": ("agentflow_eval.agents.http", "HttpAgent"),
    "load_agent": ("agentflow_eval.agents.loader", "load_agent"),
    "AgentUnderTest": ("agentflow_eval.agents.base", "AgentUnderTest"),
    "AgentSession": ("agentflow_eval.agents.base", "AgentSession"),
    "SessionContext": ("agentflow_eval.agents.base", "SessionContext"),
    "TrajectoryRecorder": ("agentflow_eval.agents.base", "TrajectoryRecorder"),
    "Environment": ("agentflow_eval.environments.environment", "Environment"),
    "TrialInfo": ("agentflow_eval.environments.environment", "TrialInfo"),
    "register_criterion": ("agentflow_eval.criteria.registry", "register"),
    "criterion": ("agentflow_eval.criteria.spec", "criterion"),
    "CriterionSpec": ("agentflow_eval.criteria.spec", "CriterionSpec"),
    "register_adapter": ("agentflow_eval.agents.frameworks", "register_adapter"),
    "FrameworkAdapter": ("agentflow_eval.agents.frameworks", "FrameworkAdapter"),
    "register_store": ("agentflow_eval.storage.stores", "register_store"),
    "StoreForm": ("agentflow_eval.storage.stores", "StoreForm"),
    "add_provider_exception": ("agentflow_eval.llm.provider_faults", "add_provider_exception"),
    "Criterion": ("agentflow_eval.criteria.base", "Criterion"),
    "CriterionContext": ("agentflow_eval.criteria.base", "CriterionContext"),
    "scored": ("agentflow_eval.criteria.base", "scored"),
    "not_evaluated": ("agentflow_eval.criteria.base", "not_evaluated"),
    "skipped": ("agentflow_eval.criteria.base", "skipped"),
    "RunResult": ("agentflow_eval.models.results", "RunResult"),
    "CaseResult": ("agentflow_eval.models.results", "CaseResult"),
    "TrialResult": ("agentflow_eval.models.results", "TrialResult"),
    "CriterionResult": ("agentflow_eval.models.results", "CriterionResult"),
    "ModelClient": ("agentflow_eval.llm.client", "ModelClient"),
}

__all__ = [
    "AgentEvaluator",
    "AgentSession",
    "AgentUnderTest",
    "AgentflowEvalError",
    "CaseResult",
    "Criterion",
    "CriterionConfig",
    "CriterionContext",
    "CriterionResult",
    "CriterionSpec",
    "Environment",
    "EvalCase",
    "EvalConfig",
    "EvalSet",
    "EvaluationFailed",
    "FrameworkAdapter",
    "HttpAgent",
    "Invocation",
    "LiteLLMAgent",
    "Message",
    "ModelClient",
    "PythonAgent",
    "RegressionFound",
    "RunRequest",
    "RunResult",
    "SessionContext",
    "StoreForm",
    "ToolCall",
    "TrajectoryRecorder",
    "TrialInfo",
    "TrialResult",
    "__version__",
    "add_provider_exception",
    "criterion",
    "evaluate",
    "execute",
    "load_agent",
    "load_config",
    "load_evalset",
    "not_evaluated",
    "register_adapter",
    "register_criterion",
    "register_store",
    "rejudge",
    "scored",
    "skipped",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'agentflow_eval' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from agentflow_eval.agents.base import (
        AgentSession,
        AgentUnderTest,
        SessionContext,
        TrajectoryRecorder,
    )
    from agentflow_eval.agents.frameworks import FrameworkAdapter, register_adapter
    from agentflow_eval.agents.http import HttpAgent
    from agentflow_eval.agents.litellm_agent import LiteLLMAgent
    from agentflow_eval.agents.loader import load_agent
    from agentflow_eval.agents.python import PythonAgent
    from agentflow_eval.criteria.base import (
        Criterion,
        CriterionContext,
        not_evaluated,
        scored,
        skipped,
    )
    from agentflow_eval.criteria.config_files import load_config
    from agentflow_eval.criteria.registry import register as register_criterion
    from agentflow_eval.criteria.spec import CriterionSpec, criterion
    from agentflow_eval.errors import AgentflowEvalError
    from agentflow_eval.evaluator import AgentEvaluator, EvaluationFailed, RegressionFound
    from agentflow_eval.files.loading import load_evalset
    from agentflow_eval.llm.client import ModelClient
    from agentflow_eval.llm.provider_faults import add_provider_exception
    from agentflow_eval.models.config import CriterionConfig, EvalConfig
    from agentflow_eval.models.evalset import EvalCase, EvalSet, Invocation, Message, ToolCall
    from agentflow_eval.models.request import RunRequest
    from agentflow_eval.models.results import (
        CaseResult,
        CriterionResult,
        RunResult,
        TrialResult,
    )
    from agentflow_eval.pipeline.evaluate import evaluate, rejudge
    from agentflow_eval.pipeline.execute import execute
    from agentflow_eval.storage.stores import StoreForm, register_store
    from agentflow_eval.version import __version__
