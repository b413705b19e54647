"""Fault matrix, area 3 end to end: keys planted in a provider's 401/400/5xx bodies, an
agent's exceptions, its tool results, its answers, its log lines and a judge's errors,
through a real CLI run against a real Prefect server that publishes to SeaweedFS. Every
output is then scanned: the run folder, what the CLI printed (verbose, with failure
reasons), the Prefect server's database (flow run, task runs, logs, artifacts) and every
published object. Leaks found: 0. The server and the store are the session's
(tests/e2e/conftest.py); the planted keys are this test's alone."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.client.orchestration import PrefectClient
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.prefect_server import PrefectServer, prefect_env
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
BUCKET = "leak-check"
ANSWER = "the answer is 42"

OPENAI_KEY = "sk-proj-PLANTEDe2eKEY0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-PLANTEDe2eANTHROPIC0123456789"
PATTERN_KEY = "AKIAPLANTEDE2EKEY000"  # in no variable: caught by its shape
REGISTERED = "vault-secret-PLANTED-e2e-5a4b3c2d"  # registered at run time

AGENT = f"""
import logging, os
from agentflow_eval.redaction import register_secret

REGISTERED = {REGISTERED!r}
register_secret(REGISTERED)  # what a Secret-block loader does with what it reads
log = logging.getLogger("leaky_agent")


async def agent(message, session, recorder):
    key = os.environ["OPENAI_API_KEY"]
    log.warning("calling the model for %s with key %s (and %s)", session.case_id, key, REGISTERED)
    if "raise" in message:
        raise RuntimeError(f"agent config dump: key={{REGISTERED}} aws={PATTERN_KEY!r}")
    recorder.tool_call("read_env", {{"name": "OPENAI_API_KEY"}}, {{"value": key}})
    reply = await session.models.complete(
        model="openai/agent-model",
        messages=[{{"role": "user", "content": message}}],
        api_base=os.environ["SCRIPTED_URL"],
        api_key=key,
    )
    return str(reply.choices[0].message.content)
"""

SECRETS = (OPENAI_KEY, ANTHROPIC_KEY, PATTERN_KEY, REGISTERED)


def provider(body: dict[str, Any]) -> Reply:
    """The model and the judge, each quoting a key where providers do."""
    if body["model"] == "judge-model":
        return Reply.error(400, f"judge rejected key {OPENAI_KEY}")
    prompt = str(body["messages"][-1]["content"])
    if "bad request" in prompt:
        return Reply.error(400, f"Incorrect API key provided: {OPENAI_KEY}")
    if "down" in prompt:
        return Reply.error(503, f"upstream {PATTERN_KEY} down", headers={"retry-after-ms": "1"})
    return Reply.text(f"{ANSWER} (used {ANTHROPIC_KEY})")


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> Iterator[SeaweedFS]:
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    yield shared_seaweed


async def _completed_event_stored(api_url: str, eval_set_id: str, timeout_s: float = 60) -> None:
    """Wait until the server has stored the run's ``agentflow.eval.completed`` event (the
    server stores events a moment after they arrive): then the database holds it."""
    events = EventFilter(
        event=EventNameFilter(name=["agentflow.eval.completed"]),
        resource=EventResourceFilter(id=[f"agentflow.eval-set.{eval_set_id}"]),
    )
    async with PrefectClient(api=api_url) as client:
        for _ in range(int(timeout_s / 0.5)):
            if (await client.read_events(events, limit=1)).events:
                return
            await asyncio.sleep(0.5)
    raise AssertionError(f"no agentflow.eval.completed event for {eval_set_id} stored")


def leaks_in(blob: bytes) -> list[str]:
    return [secret for secret in SECRETS if secret.encode() in blob]


def test_no_planted_key_reaches_any_output(
    tmp_path: Path, seaweed: SeaweedFS, shared_prefect: PrefectServer
) -> None:
    (tmp_path / "leaky_agent.py").write_text(AGENT, encoding="utf-8")
    evalset = tmp_path / "leaks.evalset.json"
    texts = ["ok", "bad request", "down", "raise"]
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "leaks",
                "eval_cases": [
                    {
                        "eval_id": f"case-{text.replace(' ', '-')}",
                        "conversation": [{"user_content": text, "expected_final_response": ANSWER}],
                    }
                    for text in texts
                ],
            }
        ),
        encoding="utf-8",
    )
    home = tmp_path / "prefect"
    home.mkdir()
    api_url = shared_prefect.api_url
    with ScriptedOpenAIServer(handler=provider) as model:
        config = tmp_path / "config.json"
        config.write_text(
            json.dumps(
                {
                    "criteria": {
                        "response_match_score": 0.5,
                        "final_response_match_v2": {"num_samples": 1},
                    },
                    "judge": {
                        "model": "openai/judge-model",
                        "api_base": model.url,
                        "api_key_env": "OPENAI_API_KEY",
                        "max_retries": 0,
                    },
                }
            ),
            encoding="utf-8",
        )
        env = prefect_env(home, api_url)
        env.update(
            OPENAI_API_KEY=OPENAI_KEY,
            ANTHROPIC_API_KEY=ANTHROPIC_KEY,
            SCRIPTED_URL=model.url,
            AWS_ACCESS_KEY_ID=seaweed.access_key,
            AWS_SECRET_ACCESS_KEY=seaweed.secret_key,
            AWS_DEFAULT_REGION=seaweed.region,
            PREFECT_LOGGING_TO_API_ENABLED="true",
            PREFECT_LOGGING_EXTRA_LOGGERS="leaky_agent",
        )
        done = subprocess.run(
            [
                AGENTFLOW_EVAL,
                "run",
                "leaky_agent.py:agent",
                str(evalset),
                "--config",
                str(config),
                "--runs",
                "2",
                "-v",
                "--output",
                str(tmp_path / "out"),
                *seaweed.publish_flags(f"s3://{BUCKET}/nightly"),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-4000:]
    asyncio.run(_completed_event_stored(api_url, "leaks"))

    # the run did meet every planted key: the failures are there, redacted
    (run_dir,) = (tmp_path / "out").glob("*/*")
    trials = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    kinds = sorted(t["error"]["kind"] for t in trials if t["error"])
    assert kinds == ["exception"] * 4 + ["infrastructure"] * 2
    assert "[REDACTED]" in (run_dir / "judged.jsonl").read_text()

    found: dict[str, list[str]] = {}
    for path in run_dir.rglob("*"):
        if path.is_file():
            found[f"run folder: {path.name}"] = leaks_in(path.read_bytes())
    found["terminal"] = leaks_in((done.stdout + done.stderr).encode())

    blob = shared_prefect.database()
    assert blob, f"no Prefect database in {shared_prefect.home}"
    assert b"calling the model for case-ok with key [REDACTED]" in blob  # logs reached it
    found["prefect database"] = leaks_in(blob)

    client = seaweed.client()
    keys = [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert any(key.endswith("/report.html") for key in keys), keys
    for key in keys:
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        found[f"s3: {key}"] = leaks_in(body)

    assert {where: keys for where, keys in found.items() if keys} == {}
    assert len(found) >= 10  # run folder files, terminal, database, published objects
