"""Fault matrix, area 3 — secrets in error text: the redactor, and every place strings
become data. Keys are planted in 401 bodies, provider error bodies, agent exceptions,
tool results, agent answers and judge errors; every file a run writes is then scanned.
(The end-to-end scan — CLI output, a real Prefect server's database, published S3
objects — is tests/e2e/test_faults_leaks.py.)"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.retry import RetryPolicy
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.pipeline.evaluate import evaluate
from agentflow_eval.redaction import (
    REDACT_ENV,
    REDACTED,
    RedactingFilter,
    Redactor,
    install_log_redaction,
    redact,
    redact_data,
    redact_named_data,
    register_secret,
    secret_field,
)
from agentflow_eval.testing import Reply, ScriptedOpenAIServer
from tests.support.faults import ANSWER, answer_evalset

ENV_KEY = "sk-proj-PLANTEDenvKEY0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-PLANTEDanthropicKEY0123456789"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY"
PATTERN_KEY = "AKIAPLANTEDPATTERN00"  # not in the environment: caught by its shape
REGISTERED = "vault-secret-PLANTED-9f8e7d6c"
ALL_SECRETS = (ENV_KEY, ANTHROPIC_KEY, AWS_SECRET, PATTERN_KEY, REGISTERED)


@pytest.fixture(autouse=True)
def planted_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    register_secret(REGISTERED)


def leaks(text: str) -> list[str]:
    return [secret for secret in ALL_SECRETS if secret in text]


def test_known_variables_patterns_and_registered_values_are_removed() -> None:
    text = (
        f"401: Incorrect API key provided: {ENV_KEY}. Also {ANTHROPIC_KEY}, {AWS_SECRET}, "
        f"{PATTERN_KEY}, {REGISTERED}"
    )
    cleaned = redact(text)
    assert leaks(cleaned) == []
    assert cleaned.count(REDACTED) == 5 and cleaned.startswith("401: Incorrect API key")


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abcdef0123456789ghijkl",
        'headers={"api_key": "zz9-plural-z-alpha-42"}',
        "https://host/v1?access_token=tok3n-value-0123",
        "AIzaSyD-PLANTED-google-key-0123456789abcde",
        "ghp_PLANTED0123456789abcdefghijklmnopqrstu",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
)
def test_credential_shapes_are_removed(text: str) -> None:
    cleaned = redact(text)
    assert REDACTED in cleaned
    assert not any(part in cleaned for part in ("0123456789", "zz9-plural", "dozjgNryP4"))


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Tokyo is sunny, 75°F.",
        "Basic information: the bearer of this letter is welcome.",
        "Token usage: 1234 prompt tokens",
        "password: hunter2",  # too short to be told from prose
        "skip-this-one is not a key",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_configured_variables_count_and_short_values_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_SERVICE_CRED", "configured-secret-value")
    monkeypatch.setenv(REDACT_ENV, "MY_SERVICE_CRED")
    monkeypatch.setenv("SHORT_API_KEY", "abc")
    monkeypatch.setenv("DATABASE_PASSWORD", "named-like-a-secret-1")
    monkeypatch.setenv("MODEL_NAME", "gpt-4o-mini-2024")  # not a secret name
    text = "configured-secret-value abc named-like-a-secret-1 gpt-4o-mini-2024"
    assert redact(text) == f"{REDACTED} abc {REDACTED} gpt-4o-mini-2024"


def test_a_password_in_a_connection_url_is_removed_there_and_wherever_it_appears(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """*_URL variables are not secrets by name, but the password inside one is: removed
    by the URL's shape, and, being in the environment, also where it turns up alone."""
    monkeypatch.setenv("DATABASE_URL", "postgres://admin:Db-PLANTED-pw-77@db.internal:5432/app")
    text = (
        "could not connect to postgres://admin:Db-PLANTED-pw-77@db.internal:5432/app; "
        "server said: password 'Db-PLANTED-pw-77' rejected"
    )
    cleaned = redact(text)
    assert "Db-PLANTED-pw-77" not in cleaned
    assert cleaned.startswith(f"could not connect to postgres://admin:{REDACTED}@db.internal")
    # by shape alone, in a URL no variable holds
    assert redact("amqp://guest:rabbit-PLANTED@mq:5672/") == f"amqp://guest:{REDACTED}@mq:5672/"


@pytest.mark.parametrize(
    "text",
    [
        "mail bob@example.com about https://example.com/users/@bob",
        "https://user@host.example/path",  # a user, no password
        "ssh://git@github.com:org/repo.git",
    ],
)
def test_urls_without_a_password_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_nested_data_is_redacted_keys_and_values() -> None:
    data = {"result": [ENV_KEY, {"token": 5, REGISTERED: True}], "ok": 1.5}
    assert redact_data(data) == {"result": [REDACTED, {"token": 5, REDACTED: True}], "ok": 1.5}


def test_the_environment_is_read_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    redactor = Redactor()
    assert redactor.redact("late-exported-key-0001") == "late-exported-key-0001"
    monkeypatch.setenv("LATE_API_KEY", "late-exported-key-0001")
    assert redactor.redact("late-exported-key-0001") == REDACTED


def test_log_records_are_redacted_before_any_handler(caplog: pytest.LogCaptureFixture) -> None:
    install_log_redaction()
    logger = logging.getLogger("agentflow_eval.test.redaction")
    with caplog.at_level(logging.INFO, logger=logger.name):
        logger.info("calling with key %s", ENV_KEY)
        try:
            raise RuntimeError(f"provider said: bad key {REGISTERED}")
        except RuntimeError:
            logger.exception("call failed for case %r", "c\x1b[31m")
    text = caplog.text
    assert leaks(text) == [] and text.count(REDACTED) >= 2
    assert "\x1b" not in text and "c\\x1b[31m" in text  # an id cannot drive the terminal


def test_the_filter_redacts_a_record_in_place() -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "key=%s", (ENV_KEY,), None)
    assert RedactingFilter().filter(record) is True
    assert record.getMessage() == f"key={REDACTED}"


async def test_every_file_of_a_run_is_clean(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    """Keys planted in every place a string becomes data; the run folder holds none."""

    def provider(body: dict[str, Any]) -> Reply:
        prompt = str(body["messages"][-1]["content"])
        if body["model"] == "judge-model":  # a judge that fails quoting its key
            return Reply.error(400, f"invalid request for key {ENV_KEY}")
        if "bad request" in prompt:  # a provider error body quoting the key
            return Reply.error(400, f"Incorrect API key provided: {ENV_KEY}")
        if "down" in prompt:  # a 5xx body quoting another secret, until retries run out
            return Reply.error(503, f"upstream {AWS_SECRET} down", headers={"retry-after-ms": "1"})
        return Reply.text(f"{ANSWER} (I used {ANTHROPIC_KEY})")

    server.handler = provider

    async def agent(message: str, session, recorder) -> str:  # type: ignore[no-untyped-def]
        if "raise" in message:
            raise RuntimeError(f"agent config dump: key={REGISTERED} aws={PATTERN_KEY}")
        recorder.tool_call("read_env", {"name": "OPENAI_API_KEY"}, {"value": ENV_KEY})
        reply = await session.models.complete(
            model="openai/agent-model",
            messages=[{"role": "user", "content": message}],
            api_base=server.url,
            api_key=ENV_KEY,
        )
        return str(reply.choices[0].message.content)

    eval_set = answer_evalset(4).model_dump(mode="json")
    for case, text in zip(
        eval_set["eval_cases"], ["ok", "bad request", "down", "raise"], strict=True
    ):
        case["conversation"][0]["user_content"] = text
    config = EvalConfig.model_validate(
        {
            "criteria": {
                "response_match_score": 0.5,
                "final_response_match_v2": {"num_samples": 1},
            },
            "judge": {
                "model": "openai/judge-model",
                "api_base": server.url,
                "api_key_env": "OPENAI_API_KEY",
            },
        }
    )
    from agentflow_eval.models.evalset import EvalSet

    async with ModelClient(retry=RetryPolicy(max_retries=1, base_delay_s=0.01)) as models:
        run = await evaluate(
            PythonAgent(agent),
            EvalSet.model_validate(eval_set),
            config,
            runs=2,
            output_dir=tmp_path,
            models=models,
        )
    kinds = sorted(t.trial.error.kind for t in run.trials if t.trial.error)
    assert kinds == [
        "exception",
        "exception",
        "exception",
        "exception",
        "infrastructure",
        "infrastructure",
    ]
    scanned = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {p.name for p in scanned} >= {
        "trials.jsonl",
        "judged.jsonl",
        "results.json",
        "report.html",
        "junit.xml",
        "run.json",
    }
    found = {p.name: leaks(p.read_text(encoding="utf-8", errors="replace")) for p in scanned}
    assert {name: keys for name, keys in found.items() if keys} == {}
    judged = (tmp_path.rglob("judged.jsonl").__next__()).read_text(encoding="utf-8")
    assert REDACTED in judged  # the judge's error and the agent's answer were redacted


def test_a_presigned_link_keeps_its_access_key_id_and_works_where_printed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The access key id is no secret (the signature is, and it expires): a printed
    presigned link keeps it, or it would not open; the same id anywhere else, and the
    secret key anywhere, are still removed."""
    key_id = "AKIAPLANTEDLINKKEY00"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    link = (
        "http://127.0.0.1:8333/bucket/set/run/report.html?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={key_id}%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host"
        "&X-Amz-Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
    )
    legacy = f"https://b.s3.amazonaws.com/k?AWSAccessKeyId={key_id}&Expires=1&Signature=x"
    text = f"published to s3://bucket/set: {link} (key {key_id}, secret {AWS_SECRET}) {legacy}"
    cleaned = redact(text)
    assert link in cleaned and legacy in cleaned
    assert f"(key {REDACTED}, secret {REDACTED})" in cleaned
    assert redact_data({"urls": {"report": link}}) == {"urls": {"report": link}}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("db.password", True),
        ("http.request.header.authorization", True),
        ("api_key", True),
        ("x-api-key", True),
        ("access_token", True),
        ("set-cookie", True),
        ("gen_ai.usage.input_tokens", False),
        ("max_tokens", False),
        ("llm.token_count.prompt", False),
        ("session.id", False),
        ("gen_ai.tool.call.arguments", False),
    ],
)
def test_a_field_is_a_secret_by_its_name_and_counts_of_tokens_are_not(
    name: str, secret: bool
) -> None:
    assert secret_field(name) is secret


def test_records_written_by_others_lose_values_named_as_secrets_whatever_their_shape() -> None:
    clean = {"city": "Paris", "usage": {"input_tokens": 12}, "list": [{"note": "fine"}]}
    assert redact_named_data(clean) is clean  # nothing to redact: the record as it was
    leaky = {
        "city": "Paris",
        "nested": [{"password": "correct-horse-battery-staple", "count": 3}],
        "header": "Bearer abcdefgh12345678",
        "token": "",
    }
    assert redact_named_data(leaky) == {
        "city": "Paris",
        "nested": [{"password": REDACTED, "count": 3}],
        "header": f"Bearer {REDACTED}",
        "token": "",  # nothing there to hide
    }
