"""Names of the simulated demo model, importable without LiteLLM.

The demo model itself (:mod:`agentflow_eval.demo.model`) is a LiteLLM custom provider and
imports LiteLLM; code that only needs to recognise or label it imports this module.
"""

from __future__ import annotations

__all__ = ["DEMO_PROVIDER", "SIMULATED_LABEL", "is_demo_model"]

DEMO_PROVIDER = "agentflow-demo"
SIMULATED_LABEL = (
    "SIMULATED MODEL: agentflow-demo/* is agentflow-eval's built-in offline stand-in for an "
    "LLM. It answers with seeded heuristics, not a language model; its scores show how the "
    "evaluation works, not how good any real agent is."
)


def is_demo_model(model: str | None) -> bool:
    """Whether ``model`` is served by the simulated demo provider."""
    return bool(model) and str(model).startswith(f"{DEMO_PROVIDER}/")
