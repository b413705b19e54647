"""A finished run with LLM-judged verdicts to review, made by the real pipeline without
Prefect: an agent that calls a weather tool and answers right on even trials and wrong
on odd ones, judged by the offline demo judge on ``final_response_match_v2`` (pass or
fail, three samples) and ``response_evaluation_score`` (ADK's 1-to-5 scale)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agentflow_eval.pipeline.evaluate import evaluate_outcome

__all__ = ["RIGHT", "WRONG", "judged_run_folder"]

RIGHT = "The weather in New York is sunny with a temperature of 72°F."
WRONG = "New York is rainy at 55°F."

AGENT = f"""
def agent(message, recorder, session):
    with recorder.tool("get_weather", {{"location": "New York"}}) as call:
        call.result = {{"condition": "sunny", "temperature": 72}}
    return {WRONG!r} if session.trial_index % 2 else {RIGHT!r}
"""


def judged_run_folder(folder: Path, *, cases: int = 3, runs: int = 2, scale: bool = False) -> Path:
    """A finished run folder under ``folder``: ``cases`` × ``runs`` trials, judged on
    ``final_response_match_v2`` (and, with ``scale``, ``response_evaluation_score``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "weather_agent.py").write_text(AGENT, encoding="utf-8")
    evalset = {
        "eval_set_id": "weather_review",
        "eval_cases": [
            {
                "eval_id": f"new_york_{index}",
                "conversation": [
                    {
                        "user_content": "What's the weather in New York?",
                        "expected_final_response": RIGHT,
                    }
                ],
            }
            for index in range(cases)
        ],
    }
    (folder / "weather.evalset.json").write_text(json.dumps(evalset), encoding="utf-8")
    criteria: dict[str, object] = {"final_response_match_v2": {"num_samples": 3}}
    if scale:
        criteria["response_evaluation_score"] = {"threshold": 4}
    (folder / "config.json").write_text(json.dumps({"criteria": criteria}), encoding="utf-8")
    outcome = asyncio.run(
        evaluate_outcome(
            f"{folder / 'weather_agent.py'}:agent",
            folder / "weather.evalset.json",
            folder / "config.json",
            runs=runs,
            output_dir=str(folder / "out"),
            judge_model="agentflow-demo/judge",
        )
    )
    return outcome.run_dir
