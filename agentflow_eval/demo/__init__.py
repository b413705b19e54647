"""The offline demo model and judge: agentflow-eval's built-in stand-in for an LLM, a
plugin the front doors install (:func:`install`), not something the model client knows.
"""

from __future__ import annotations

from agentflow_eval.criteria.registry import judge_model
from agentflow_eval.demo.names import names_demo_model
from agentflow_eval.models.config import EvalConfig

__all__ = ["install", "install_if_named"]


def install() -> None:
    """Register ``agentflow-demo/*`` with LiteLLM (idempotent). LiteLLM is imported here,
    so a front door calls this when it is about to run, not at its own import."""
    from agentflow_eval.demo.model import install as install_model

    install_model()


def install_if_named(config: EvalConfig, agent_model: str | None = None) -> bool:
    """:func:`install` when the agent's model, a judge's or the simulated user's is a demo
    model; whether it did."""
    simulator = config.user_simulator_config
    named = names_demo_model(
        agent_model,
        config.judge.model,
        *(judge_model(name, options) for name, options in config.criteria.items()),
        simulator.model if simulator is not None else None,
    )
    if named:
        install()
    return named
