"""Every use of LiteLLM beyond its documented ``acompletion``, in one place.

LiteLLM does not document these, so an upgrade may change them; the pins in pyproject
(``litellm>=1.106,<1.107``) and ``tests/unit/llm/test_litellm_compat.py`` guard them, and
that test fails with the name of the piece that moved. Nothing here imports LiteLLM at
module import: it costs seconds, and the direct transport never needs it.

- the price map LiteLLM ships in its package (read as a file, so the direct transport can
  tell a priced hosted model from a self-hosted one without importing LiteLLM);
- the cost LiteLLM already computed for a reply (``_hidden_params["response_cost"]``),
  which saves pricing every reply twice;
- the request option that skips LiteLLM's MCP gateway for plain function tools
  (``_skip_mcp_handler``): without it, every request with tools imports the gateway and
  the optional ``mcp`` package;
- LiteLLM's registry of custom providers, to register the offline demo model once and
  to know a reply came from one (they have no price).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from agentflow_eval.import_cost import import_paused

__all__ = [
    "PRICE_MAP_FILE",
    "SKIP_MCP_OPTION",
    "computed_cost",
    "has_custom_provider",
    "listed_cost",
    "litellm_module",
    "loaded_litellm",
    "packaged_price_map",
    "price_map",
    "register_custom_provider",
]

PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"
"""The price map's file name inside the installed ``litellm`` package."""

SKIP_MCP_OPTION = "_skip_mcp_handler"
"""The ``acompletion`` option that tells LiteLLM a request's tools are plain functions."""

_COST_KEY = "response_cost"


def loaded_litellm() -> Any | None:
    """The LiteLLM module when something already imported it, else ``None``."""
    return sys.modules.get("litellm")


def litellm_module() -> Any:
    """The LiteLLM module, imported on the first call with the cyclic collector paused
    (its import costs seconds; :mod:`agentflow_eval.import_cost` says why the pause)."""
    return import_paused("litellm")


@functools.cache
def packaged_price_map() -> Mapping[str, Any]:
    """The price map shipped inside the installed LiteLLM package, read as JSON without
    importing LiteLLM; empty when LiteLLM is not installed or the file is gone."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), PRICE_MAP_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            prices = json.load(handle)
    except (OSError, ValueError):
        return {}
    return prices if isinstance(prices, dict) else {}


def price_map() -> Mapping[str, Any]:
    """LiteLLM's live price map when it is loaded (prices registered at run time count
    too), else the packaged copy."""
    litellm = loaded_litellm()
    prices = getattr(litellm, "model_cost", None) if litellm is not None else None
    return prices if isinstance(prices, Mapping) else packaged_price_map()


def listed_cost(
    model: str | None, provider: str | None, prompt: int, completion: int
) -> float | None:
    """A call's cost at LiteLLM's list price for ``model`` (tried as ``provider/model``
    first); None when the list has no price for it."""
    if not model:
        return None
    prices = price_map()
    for key in (f"{provider}/{model}" if provider else None, model):
        entry = prices.get(key) if key else None
        if isinstance(entry, Mapping) and "input_cost_per_token" in entry:
            unit_in = float(entry.get("input_cost_per_token") or 0.0)
            unit_out = float(entry.get("output_cost_per_token") or 0.0)
            return prompt * unit_in + completion * unit_out
    return None


def computed_cost(response: Any) -> tuple[bool, float | None]:
    """``(known, cost)``: whether LiteLLM already priced ``response`` and the price it
    found (``None`` when it looked and found none)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    if _COST_KEY not in hidden:
        return False, None
    cost = hidden[_COST_KEY]
    return True, float(cost) if isinstance(cost, int | float) else None


def has_custom_provider(provider: str) -> bool:
    """Whether ``provider`` is registered with LiteLLM as a custom provider."""
    litellm = loaded_litellm()
    if litellm is None:
        return False
    return any(item.get("provider") == provider for item in litellm.custom_provider_map)


def register_custom_provider(provider: str, handler: Any) -> None:
    """Register ``handler`` (a ``litellm.CustomLLM``) for ``provider/<model>`` names, once."""
    litellm = litellm_module()  # its registry is a module attribute

    if has_custom_provider(provider):
        return
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": provider, "custom_handler": handler},
    ]
