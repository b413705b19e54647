"""The offline demo model and judge: agentflow-eval's built-in stand-in for an LLM, a
plugin the front doors install (:func:`install`), not something the model client knows.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentflow_eval.demo.after_import import after_import
from agentflow_eval.demo.names import is_demo_model
from agentflow_eval.llm.litellm_compat import litellm_module

__all__ = ["install", "install_for"]


def install() -> None:
    """Register ``agentflow-demo/*`` with LiteLLM (idempotent). LiteLLM is imported here,
    so a front door calls this when it is about to run, not at its own import."""
    # LiteLLM first, on its own: a call waiting for its import (``install_for``) runs
    # this again as that import ends, and must not find the model's module half-made
    litellm_module()

    from agentflow_eval.demo.model import install as install_model

    install_model()


def install_for(models: Iterable[str | None]) -> None:
    """:func:`install` when a run needs it, and only then pay for LiteLLM's import: now,
    when one of ``models`` (those the run names for its agent, judges and simulated user)
    is a demo model; otherwise as soon as anything loads LiteLLM (the model client's
    LiteLLM transport, an agent or framework calling it), which may be now. A run that
    never loads LiteLLM (other models, through the direct transport) never imports it."""
    if any(is_demo_model(model) for model in models):
        install()
    else:
        after_import("litellm", install)
