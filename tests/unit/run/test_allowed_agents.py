"""The allow-list of agents a deployment evaluates: module prefixes and endpoint hosts,
checked before the agent is imported."""

from __future__ import annotations

import pytest

from agentflow_eval.errors import InputError
from agentflow_eval.models.request import RunRequest
from agentflow_eval.run.allowed_agents import check_agent_allowed
from agentflow_eval.run.plan import plan_request

ALLOWED = ["examples", "team.agents", "https://agents.example.com/", "eval.internal:8080"]


@pytest.mark.parametrize(
    "agent",
    [
        "examples.weather.agent:agent",
        "examples:agent",
        "team.agents.support:root_agent",
        "https://agents.example.com/v1/chat",
        "http://eval.internal:8080/",
    ],
)
def test_agents_inside_the_list_pass(agent: str) -> None:
    check_agent_allowed(agent, ALLOWED)


@pytest.mark.parametrize(
    ("agent", "why"),
    [
        ("examples_evil.agent:agent", "module examples_evil.agent is not in allowed_agents"),
        ("team.agents_x:agent", "module team.agents_x is not in allowed_agents"),
        ("os:system", "module os is not in allowed_agents"),
        ("examples/weather/agent.py:agent", "an agent file is not allowed"),
        ("/tmp/x.py:agent", "an agent file is not allowed"),
        ("https://agents.example.com.evil.io/", "host agents.example.com.evil.io is not in"),
        ("https://user@evil.io/", "host evil.io is not in"),
        ("http://eval.internal:9090/", "host eval.internal:9090 is not in"),
        (None, "no agent was named"),
        ("", "no agent was named"),
    ],
)
def test_agents_outside_the_list_are_refused_in_one_line(agent: str | None, why: str) -> None:
    with pytest.raises(InputError, match=why) as refused:
        check_agent_allowed(agent, ALLOWED)
    assert "\n" not in str(refused.value)


def test_an_empty_list_allows_any_agent() -> None:
    check_agent_allowed("/tmp/x.py:agent", [])
    check_agent_allowed(None, ["  "])


def test_planning_refuses_before_importing_the_agent(tmp_path) -> None:
    marker = tmp_path / "imported"
    agent = tmp_path / "agent.py"
    agent.write_text(f"open({str(marker)!r}, 'w').close()\ndef agent(m):\n    return m\n")
    params = RunRequest(
        agent=f"{agent}:agent",
        evalset=str(tmp_path / "missing.json"),
        output_dir=str(tmp_path / "out"),
        allowed_agents=["examples"],
    )
    with pytest.raises(InputError, match="an agent file is not allowed"):
        plan_request(params)
    assert not marker.exists() and not (tmp_path / "out").exists()
