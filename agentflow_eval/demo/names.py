"""Names of the simulated demo model, importable without LiteLLM.

The demo model itself (:mod:`agentflow_eval.demo.model`) is a LiteLLM custom provider and
imports LiteLLM; code that only needs to recognise or label it imports this module.
"""

from __future__ import annotations

__all__ = ["DEMO_PROVIDER", "SIMULATED_LABEL", "answering_model", "is_demo_model"]

DEMO_PROVIDER = "agentflow-demo"
SIMULATED_LABEL = (
    "SIMULATED MODEL: agentflow-demo/* is agentflow-eval's built-in offline stand-in for an "
    "LLM. It answers with seeded heuristics, not a language model; its scores show how the "
    "evaluation works, not how good any real agent is."
)


def is_demo_model(model: str | None) -> bool:
    """Whether ``model`` is served by the simulated demo provider."""
    return bool(model) and str(model).startswith(f"{DEMO_PROVIDER}/")


def answering_model(requested: str) -> str:
    """The model a demo reply says answered, whatever name the caller asked for
    (``agentflow-demo/gpt-4o-mini (simulated)`` for ``gpt-4o-mini``): what a framework
    records from the reply marks the run simulated, and no price list knows it."""
    bare = requested.removeprefix(f"{DEMO_PROVIDER}/")
    return f"{DEMO_PROVIDER}/{bare} (simulated)"
