"""The pieces of LiteLLM we use beyond its documented API still work as we use them. When
an upgrade moves one, the failing test names it (see agentflow_eval/llm/litellm_compat.py)."""

from __future__ import annotations

import inspect

import litellm
import pytest

from agentflow_eval.demo import install as install_demo
from agentflow_eval.demo.names import DEMO_PROVIDER
from agentflow_eval.llm import litellm_compat
from agentflow_eval.llm.client import ModelClient, response_cost


def test_the_price_map_ships_inside_the_package_where_we_read_it() -> None:
    litellm_compat.packaged_price_map.cache_clear()
    prices = litellm_compat.packaged_price_map()
    assert prices, f"litellm no longer ships {litellm_compat.PRICE_MAP_FILE} in its package"
    assert "input_cost_per_token" in prices["gpt-4o-mini"]


def test_litellm_still_reads_the_option_that_skips_its_mcp_gateway() -> None:
    source = inspect.getsource(litellm.main)
    assert f'kwargs.pop("{litellm_compat.SKIP_MCP_OPTION}"' in source, (
        "litellm.completion no longer pops _skip_mcp_handler: requests with tools would go "
        "through its MCP gateway"
    )


async def test_litellm_keeps_the_cost_it_computed_with_the_reply() -> None:
    reply = await litellm.acompletion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], mock_response="hello"
    )
    known, cost = litellm_compat.computed_cost(reply)
    assert known, "litellm no longer records response_cost in a reply's _hidden_params"
    assert cost is not None and cost > 0
    assert response_cost(reply, "gpt-4o-mini") == pytest.approx(cost)


async def test_custom_providers_register_and_answer_through_the_client() -> None:
    install_demo()  # a plugin the front doors install; the client knows no provider by name
    install_demo()
    async with ModelClient() as models:
        reply = await models.complete(
            model=f"{DEMO_PROVIDER}/weather",
            messages=[{"role": "user", "content": "Say hi in one short sentence."}],
        )
    assert litellm_compat.has_custom_provider(DEMO_PROVIDER)
    providers = [item["provider"] for item in litellm.custom_provider_map]
    assert providers.count(DEMO_PROVIDER) == 1  # registered once, however many calls
    assert reply.choices[0].message.content
    assert response_cost(reply, f"{DEMO_PROVIDER}/weather") is None  # unknown, not free
