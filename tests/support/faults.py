"""Fault injection for the reliability tests: eval sets of simple cases, and a scripted
model handler that fails a fixed share of its requests the way providers do."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.folder_lock import LOCK_NAME
from agentflow_eval.run.plan import RunInputs
from agentflow_eval.run.resume import fingerprint
from agentflow_eval.testing import Reply

ANSWER = "the answer is 42"


def answer_evalset(
    n_cases: int, *, eval_set_id: str = "faults", text: str = "what is it?"
) -> EvalSet:
    """``n_cases`` one-turn cases expecting :data:`ANSWER`."""
    return EvalSet.model_validate(
        {
            "eval_set_id": eval_set_id,
            "eval_cases": [
                {
                    "eval_id": f"c{i:02d}",
                    "conversation": [{"user_content": text, "expected_final_response": ANSWER}],
                }
                for i in range(n_cases)
            ],
        }
    )


def answer_config(**fields: Any) -> EvalConfig:
    """Judge the answer with ROUGE-1 only: deterministic, no judge model."""
    return EvalConfig(criteria={"response_match_score": CriterionConfig(threshold=0.8)}, **fields)


def folder_digest(run_dir: Path) -> str:
    """The run's files, names and bytes (the lock's note of its last holder aside)."""
    digest = hashlib.sha256()
    for path in sorted(run_dir.rglob("*")):
        if path.is_file() and path.name != LOCK_NAME:
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def unfinished_run_dir(tmp_path: Path, agent: str) -> Path:
    """The folder of a run of ``agent`` that started and finished no trial (its run.json
    alone): 3 cases of :func:`answer_evalset`, 2 runs each, under ``tmp_path/out``, its
    eval set and config written beside it."""
    evalset = tmp_path / "set.evalset.json"
    evalset.write_text(answer_evalset(3).model_dump_json(), encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"response_match_score": 0.8}}), encoding="utf-8")
    run_dir = tmp_path / "out" / "faults" / "20260101T000000Z-abcd1234"
    run_dir.mkdir(parents=True)
    params = {
        "agent": agent,
        "evalset": str(evalset),
        "config": str(config),
        "runs": 2,
        "output_dir": str(tmp_path / "out"),
    }
    inputs = RunInputs.of(EvalSet.model_validate_json(evalset.read_text()), answer_config())
    (run_dir / "run.json").write_text(
        json.dumps(
            {
                "run_id": "abcd1234",
                "started_at": "2026-01-01T00:00:00+00:00",
                "runs_per_case": 2,
                "params": params,
                "fingerprint": fingerprint(inputs),
            }
        )
    )
    return run_dir


TRANSIENT_FAULTS: tuple[Callable[[], Reply], ...] = (
    lambda: Reply.error(429, "rate limited", headers={"retry-after-ms": "5"}),
    lambda: Reply.error(500, "internal error", headers={"retry-after-ms": "5"}),
    lambda: Reply.error(503, "overloaded", headers={"Retry-After": "0"}),
    lambda: Reply(raw_body="<html>502 Bad Gateway</html>", headers={"retry-after-ms": "5"}),
)
"""What a provider sends on a bad night: rate limits, server errors, and a 200 whose
body is not a completion (a proxy's error page)."""


@dataclass
class FaultyModel:
    """A handler answering :data:`ANSWER`, except that every ``every``-th request gets
    the next of ``faults`` instead (``every=5``: 20% of requests fail). Thread-safe: the
    scripted server answers from several threads."""

    every: int = 5
    faults: Sequence[Callable[[], Reply]] = TRANSIENT_FAULTS
    answer: Callable[[dict[str, Any]], Reply] = lambda body: Reply.text(ANSWER)
    requests: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests += 1
            fail = self.requests % self.every == 0
            fault = self.faults[sum(self.injected.values()) % len(self.faults)] if fail else None
            reply = fault() if fault is not None else None
            if reply is not None:
                self.injected["200-not-json" if reply.status == 200 else str(reply.status)] += 1
        return reply if reply is not None else self.answer(body)

    @property
    def faults_injected(self) -> int:
        return sum(self.injected.values())
