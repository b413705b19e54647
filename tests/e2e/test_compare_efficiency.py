"""Two real runs of a tool-using LiteLLM agent against the scripted OpenAI-compatible
server, through the installed ``agentflow-eval`` command, compared with ``compare``:

- the baseline's model answers in 10 ms with 100 prompt tokens, and the agent calls
  ``search_orders`` then ``lookup_order`` then answers (it passes);
- the candidate's answers take 500 ms with 400 prompt tokens, and in 6 of 10 trials its
  second call is ``refund`` (and those trials fail). Half a second a call keeps the
  latency change well above what a loaded machine adds to every trial of both runs.

The runs were made apart: the comparison finds the case hungrier with the Mann–Whitney U
test named and leaves its latency uncalled (a run-wide shift could explain it), the pass
rate regressed, and the divergence at step 2 with its counts; a token gate fails only
with a tolerance below the change, and a latency tolerance gates nothing between runs made
apart.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.e2e.test_faults_cli import env_for
from tests.support.evalsets import one_case_evalset
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
CASE = "refund-status"

AGENTS = """
import os

from agentflow_eval.agents.litellm_agent import LiteLLMAgent


def search_orders(customer: str) -> str:
    \"\"\"Find a customer's orders.\"\"\"
    return "order 42"


def lookup_order(order: str) -> str:
    \"\"\"Look an order up.\"\"\"
    return "order 42 is on its way"


def refund(order: str) -> str:
    \"\"\"Refund an order.\"\"\"
    return "refunded"


def agent():
    return LiteLLMAgent(
        "openai/shop-model",
        tools=[search_orders, lookup_order, refund],
        api_base=os.environ["SCRIPTED_URL"],
        api_key="sk-scripted",
    )
"""


class Shop:
    """The scripted model: search, then (per the second-step count) lookup or refund,
    then the answer; every reply with ``prompt_tokens`` tokens."""

    def __init__(self, prompt_tokens: int, refund_of_ten: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.refund_of_ten = refund_of_ten
        self.second_steps = itertools.count()
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        tool_results = [m for m in request["messages"] if m.get("role") == "tool"]
        usage = {"prompt_tokens": self.prompt_tokens, "completion_tokens": 20}
        if not tool_results:
            return Reply.tools(("search_orders", {"customer": "ada"}), **usage)
        if len(tool_results) == 1:
            with self.lock:
                refunds = next(self.second_steps) % 10 < self.refund_of_ten
            name = "refund" if refunds else "lookup_order"
            return Reply.tools((name, {"order": "42"}), **usage)
        answer = "Refunded." if "refunded" in str(tool_results[-1]) else "It is on its way."
        return Reply.text(answer, **usage)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "shop_agents.py").write_text(AGENTS, encoding="utf-8")
    return one_case_evalset(
        tmp_path / "shop.evalset.json", "shop", CASE, "Where is my order?", "on its way"
    )


def _run(tmp_path: Path, api_url: str, shop: Shop, latency_s: float, name: str) -> Path:
    evalset = _project(tmp_path)
    with ScriptedOpenAIServer(handler=shop, latency_s=latency_s) as server:
        env = env_for(tmp_path, api_url, SCRIPTED_URL=server.url, NO_COLOR="1")
        done = subprocess.run(
            [
                AGENTFLOW_EVAL,
                "run",
                "shop_agents:agent",
                str(evalset),
                "--runs",
                "10",
                "--quiet",
                "--output",
                str(tmp_path / name),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode in (0, 1), done.stderr
    (results,) = (tmp_path / name).glob("shop/*/results.json")
    return results


def _compare(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [AGENTFLOW_EVAL, "compare", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_two_real_runs_compared_for_efficiency_and_divergence(
    tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    baseline = _run(tmp_path, shared_prefect.api_url, Shop(100, 0), 0.01, "base")
    candidate = _run(tmp_path, shared_prefect.api_url, Shop(400, 6), 0.5, "cand")

    shown = _compare(tmp_path, str(baseline), str(candidate))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "Mann–Whitney U test on the trials' values" in out
    assert "latency is not called" in out
    assert not any(line.startswith(f"  {CASE}: latency") for line in out.splitlines())
    tokens = next(line for line in out.splitlines() if line.startswith(f"  {CASE}: tokens"))
    assert tokens.endswith(": hungrier")
    assert (
        f"  {CASE} (regression, hungrier): tools: step 2: refund 0/10 → 6/10, "
        "lookup_order 10/10 → 4/10 (most common path: search_orders, lookup_order (10/10) → "
        "search_orders, refund (6/10))"
    ) in out

    document = json.loads(_compare(tmp_path, str(baseline), str(candidate), "--json").stdout)
    case = document["cases"][0]
    assert case["verdict"] == "regression"
    measures = {m["measure"]: m for m in case["efficiency"]["measures"]}
    assert measures["latency"]["test"] == "mann-whitney-u" and measures["latency"]["ratio"] > 1.5
    assert measures["latency"]["verdict"] == "no significant change"
    assert measures["tokens"]["verdict"] == "hungrier"
    assert measures["tool_calls"]["verdict"] == "no significant change"
    (tools,) = case["divergence"]
    assert tools["step"] == 2

    gate = [str(baseline), str(candidate), "--fail-on-regression"]
    assert _compare(tmp_path, *gate).returncode == 1  # the pass rate regressed
    # the token gate alone: against a leaner run of the same agent (same pass rate),
    # hungrier is reported, and fails only beyond a tolerance below the change; latency,
    # between runs made apart, gates nothing
    leaner = _run(tmp_path, shared_prefect.api_url, Shop(100, 6), 0.01, "leaner")
    gate = [str(leaner), str(candidate), "--fail-on-regression"]
    assert _compare(tmp_path, *gate).returncode == 0
    assert _compare(tmp_path, *gate, "--max-token-increase", "10000%").returncode == 0
    assert _compare(tmp_path, *gate, "--max-token-increase", "50%").returncode == 1
    assert _compare(tmp_path, *gate, "--max-latency-increase", "10%").returncode == 0
