"""The offline demo model and judge: agentflow-eval's built-in stand-in for an LLM, a
plugin the front doors install (:func:`install`), not something the model client knows.
"""

from __future__ import annotations

__all__ = ["install"]


def install() -> None:
    """Register ``agentflow-demo/*`` with LiteLLM (idempotent). LiteLLM is imported here,
    so a front door calls this when it is about to run, not at its own import."""
    from agentflow_eval.demo.model import install as install_model

    install_model()
