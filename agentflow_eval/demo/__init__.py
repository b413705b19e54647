"""The offline demo model and judge: agentflow-eval's built-in stand-in for an LLM, a
plugin the front doors install (:func:`install`), not something the model client knows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from agentflow_eval.demo.names import is_demo_model

__all__ = ["install", "install_for"]


def install() -> None:
    """Register ``agentflow-demo/*`` with LiteLLM (idempotent). LiteLLM is imported here,
    so a front door calls this when it is about to run, not at its own import."""
    from agentflow_eval.demo.model import install as install_model

    install_model()


def install_for(models: Iterable[str | None]) -> bool:
    """:func:`install` when a run needs it: one of ``models`` (those the run names for its
    agent, judges and simulated user) is a demo model, or LiteLLM is already loaded (an
    agent's framework imported it and may call a demo model itself). Otherwise nothing is
    imported: a run on other models through the direct transport never loads LiteLLM.
    Whether it installed."""
    if "litellm" in sys.modules or any(is_demo_model(model) for model in models):
        install()
        return True
    return False
