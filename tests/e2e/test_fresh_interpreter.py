"""What a fresh interpreter imports: the package alone costs nothing heavy, the core runs a
whole evaluation without Prefect, a run on a self-hosted model without LiteLLM, and the
ROUGE criteria load without scipy's statistics. Each check needs a process of its own
(the test session has long imported all of these)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from agentflow_eval.llm import client as llm
from tests.support.prefect_db import seeded_home

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_package_imports_nothing_heavy() -> None:
    script = (
        "import json, sys, agentflow_eval; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('prefect', 'litellm', 'agentflow_eval'))))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["agentflow_eval"]  # the version too loads on use


def test_the_core_never_imports_prefect() -> None:
    """Prefect belongs to agentflow_eval.flows and agentflow_eval.tasks alone: running the
    whole pipeline from the core (AgentEvaluator's path) loads no Prefect module, and, for
    an agent of no framework, no agent framework either (installed or not)."""
    script = """
import asyncio, json, sys, tempfile
from agentflow_eval import AgentEvaluator
from agentflow_eval.cli.commands import build_parser
build_parser()
run = asyncio.run(AgentEvaluator("examples.weather.agent:agent").evaluate(
    "examples/weather/weather.evalset.json", runs=1, output_dir=tempfile.mkdtemp()))
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORKS)))
"""
    frameworks = ("prefect", "langgraph", "langchain_core", "google", "agents", "pydantic_ai")
    script = f"FRAMEWORKS = {frameworks!r}\n" + script
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_rouge_loads_without_scipy_statistics_and_leaves_them_importable() -> None:
    """nltk would import scipy.stats (a second or more of every run's start) for measures
    ROUGE never uses; the criteria load without it, and it still imports afterwards."""
    code = (
        "import sys\n"
        "from agentflow_eval.criteria.registry import known_criteria\n"
        "known_criteria()  # every criterion module, loaded\n"
        "from agentflow_eval.criteria.response import rouge1\n"
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats was imported'\n"
        "assert rouge1('running fast', 'runs fast').fmeasure == 1.0\n"
        "import scipy.stats\n"
        "assert scipy.stats.fisher_exact([[1, 2], [3, 4]])[1] == 1.0\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_direct_run_never_imports_litellm(tmp_path: Path) -> None:
    """The weather example evaluated on a self-hosted model end to end (trials, judging,
    results.json) without LiteLLM in the process: importing it costs seconds."""
    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from pathlib import Path
        from agentflow_eval.models.config import EvalConfig
        from agentflow_eval.models.evalset import EvalSet
        from agentflow_eval.pipeline.evaluate import evaluate
        from agentflow_eval.run.plan import RunOptions
        from agentflow_eval.testing import ScriptedOpenAIServer, Reply
        from examples.weather.agent import agent

        evalset = EvalSet.model_validate({"eval_set_id": "w", "eval_cases": [{
            "eval_id": "tokyo",
            "conversation": [{"user_content": "Weather in Tokyo?",
                "expected_tool_trajectory": [{"name": "get_weather",
                                              "args": {"location": "Tokyo"}}],
                "expected_final_response": "Tokyo is sunny, 75 F."}]}]})
        config = EvalConfig.model_validate({"criteria": {"tool_trajectory_avg_score": 1.0,
                                                         "response_match_score": 0.5}})
        def model(body):
            if body["messages"][-1]["role"] == "tool":
                return Reply.text("Tokyo is sunny, 75 F.")
            return Reply.tools(("get_weather", {"location": "Tokyo"}))

        with ScriptedOpenAIServer(handler=model) as server:
            run = asyncio.run(evaluate(
                agent.with_model("openai/local-llama", api_base=server.url),
                evalset, config, output_dir=Path(sys.argv[1]), runs=2))
        print(json.dumps({"passed": run.totals.passed,
                          "litellm": "litellm" in sys.modules}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(llm.TRANSPORT_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"passed": 2, "litellm": False}


def test_a_cli_run_that_names_no_demo_model_never_imports_litellm(tmp_path: Path) -> None:
    """The demo plugin is installed only for runs that name a demo model (or whose agent
    has loaded LiteLLM itself): a plain agent function judged without an LLM runs, through
    the CLI, in a process that never imports LiteLLM."""
    seen = tmp_path / "seen.json"
    agent = tmp_path / "probe_agent.py"
    agent.write_text(
        "import json, sys\n"
        f"SEEN = {str(seen)!r}\n"
        "def agent(message: str) -> str:\n"
        "    with open(SEEN, 'w') as out:\n"
        "        json.dump({'litellm': 'litellm' in sys.modules}, out)\n"
        "    return 'hello'\n"
    )
    evalset = tmp_path / "probe.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "probe",
                "eval_cases": [
                    {
                        "eval_id": "hi",
                        "conversation": [{"user_content": "hi"}],
                        "expectations": [{"final_contains": "hello"}],
                    }
                ],
            }
        )
    )
    env = {**os.environ, "PREFECT_HOME": str(seeded_home(tmp_path / ".prefect"))}
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentflow_eval.cli",
            "run",
            f"{agent}:agent",
            str(evalset),
            "--runs",
            "1",
            "--quiet",
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(seen.read_text()) == {"litellm": False}
