"""Agents for paired-run tests, each a real agent function that makes one model call to
the scripted server ``$PAIRED_TEST_SERVER`` names (a model whose name says its latency:
``openai/fast`` or ``openai/slow``, twice as long) and answers ``ok`` when its trial
passes, ``no`` when it does not.

Whether a trial passes is drawn from the case's planted rate, seeded by the agent's own
salt, the case and the trial index: two agents of the same rates and different salts
behave alike without answering alike (an A/A pair), and a resumed run draws what an
uninterrupted one would."""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CASES = [f"c{i:02d}" for i in range(20)]
RATES = {case: 0.95 if i < 10 else 0.8 if i < 16 else 0.5 for i, case in enumerate(CASES)}
"""Each case's planted pass rate."""
DROPPED = {"c00": 0.2, "c01": 0.25, "c10": 0.1}
"""The rates of the cases the ``dropped`` agent fails more."""


def evalset() -> dict[str, Any]:
    """The eval set these agents answer: a case each, passing on ``ok``."""
    return {
        "eval_set_id": "paired",
        "eval_cases": [
            {
                "eval_id": case,
                "conversation": [{"user_content": f"case {case}"}],
                "expectations": [{"final_contains": "ok"}],
            }
            for case in CASES
        ],
    }


async def _answer(session: Any, salt: str, rates: dict[str, float], model: str) -> str:
    await session.models.complete(
        model=model,
        api_base=os.environ["PAIRED_TEST_SERVER"],
        api_key="test",
        messages=[{"role": "user", "content": session.case_id}],
    )
    draw = random.Random(f"{salt}/{session.case_id}/{session.trial_index}").random()
    return "ok" if draw < rates[session.case_id] else "no"


async def steady_a(message: str, session: Any) -> str:
    return await _answer(session, "a", RATES, "openai/fast")


async def steady_b(message: str, session: Any) -> str:
    return await _answer(session, "b", RATES, "openai/fast")


async def dropped(message: str, session: Any) -> str:
    return await _answer(session, "b", {**RATES, **DROPPED}, "openai/fast")


async def slow(message: str, session: Any) -> str:
    return await _answer(session, "b", RATES, "openai/slow")


def handler(latency_s: float) -> Any:
    """The scripted server's handler: ``ok`` after ``latency_s`` (twice that for
    ``openai/slow``)."""
    from agentflow_eval.testing import Reply

    def reply(request: dict[str, Any]) -> Reply:
        slow_model = str(request.get("model", "")).endswith("slow")
        return Reply.text("ok", delay_s=latency_s * (2 if slow_model else 1))

    return reply


@contextlib.contextmanager
def served_evalset(folder: Path, monkeypatch: Any) -> Iterator[str]:
    """The eval set written into ``folder`` (its path), while the scripted server answers
    without delay at ``$PAIRED_TEST_SERVER`` (set through pytest's ``monkeypatch``)."""
    from agentflow_eval.testing import ScriptedOpenAIServer

    path = folder / "paired.evalset.json"
    path.write_text(json.dumps(evalset()), encoding="utf-8")
    with ScriptedOpenAIServer(handler=handler(0.0)) as server:
        monkeypatch.setenv("PAIRED_TEST_SERVER", server.url)
        yield str(path)
