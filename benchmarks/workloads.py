"""The benchmark's eval sets and configs, generated into a folder.

Each case asks for the weather in one of the example's cities; the expected trajectory is
one ``get_weather`` call and the expected answer is exactly what the scripted model
writes, so every trial passes and the figures measure the evaluator, not the agent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bench_model import CITIES, JUDGE_MODEL, final_answer
from examples.weather.agent import get_weather

__all__ = ["Workload", "write_workload"]


@dataclass(frozen=True)
class Workload:
    """The files of one benchmark workload."""

    evalset: Path
    config: Path
    cases: int
    runs: int

    @property
    def trials(self) -> int:
        return self.cases * self.runs


def _case(index: int) -> dict[str, Any]:
    city = CITIES[index % len(CITIES)]
    return {
        "eval_id": f"weather_{index:05d}",
        "conversation": [
            {
                "invocation_id": "inv_1",
                "user_content": f"What's the weather in {city}?",
                "expected_tool_trajectory": [{"name": "get_weather", "args": {"location": city}}],
                "expected_final_response": final_answer(get_weather(city)),
            }
        ],
    }


def _config(runs: int, *, judge_samples: int | None, concurrency: int) -> dict[str, Any]:
    criteria: dict[str, Any] = {
        "tool_trajectory_avg_score": {"threshold": 1.0},
        "response_match_score": {"threshold": 0.8},
    }
    config: dict[str, Any] = {"criteria": criteria, "runs": runs}
    if judge_samples is not None:
        criteria["final_response_match_v2"] = {"threshold": 0.8, "num_samples": judge_samples}
        config["judge"] = {"model": f"openai/{JUDGE_MODEL}", "max_concurrency": concurrency}
    return config


def write_workload(
    folder: Path,
    name: str,
    *,
    cases: int,
    runs: int,
    judge_samples: int | None = None,
    concurrency: int = 32,
) -> Workload:
    """Write ``<name>.evalset.json`` and ``<name>.config.json`` into ``folder``: ``cases``
    weather questions, ``runs`` trials each, optionally judged by the LLM judge
    ``final_response_match_v2`` with ``judge_samples`` samples."""
    folder.mkdir(parents=True, exist_ok=True)
    evalset = folder / f"{name}.evalset.json"
    config = folder / f"{name}.config.json"
    document = {"eval_set_id": f"bench_{name}", "eval_cases": [_case(i) for i in range(cases)]}
    evalset.write_text(json.dumps(document), encoding="utf-8")
    config.write_text(
        json.dumps(_config(runs, judge_samples=judge_samples, concurrency=concurrency)),
        encoding="utf-8",
    )
    return Workload(evalset=evalset, config=config, cases=cases, runs=runs)
