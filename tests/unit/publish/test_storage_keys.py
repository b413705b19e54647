"""Object keys from hostile ids, target parsing, S3 URLs and S3 error classification."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from botocore.stub import Stubber

from agentflow_eval.errors import StoreError
from agentflow_eval.storage.keys import join_key, key_part
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.s3 import S3Store
from agentflow_eval.storage.targets import LocalTarget, S3Credentials, S3Target, parse_target

SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")

HOSTILE = [
    "../../etc/passwd",
    "/absolute/path",
    "..",
    ".",
    "",
    "a/b",
    "a\\b",
    "nul\x00byte",
    "bell\x07esc\x1b[31mred",
    "line\nbreak\r",
    "  spaced  ",
    "-leading-dash",
    ".hidden",
    "trailing.",
    "%2e%2e%2fescape",
    "ü名前",
    "x" * 300,
    "a..b",
    "C:\\Windows",
    "?query#frag",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_become_one_safe_segment(value: str) -> None:
    part = key_part(value)
    assert SAFE.match(part), part
    assert ".." not in part and "/" not in part and "\\" not in part
    assert len(part) <= 100
    assert join_key("prefix", part) == f"prefix/{part}"


def test_distinct_ids_never_share_a_segment_and_safe_ids_are_kept() -> None:
    parts = [key_part(value) for value in [*HOSTILE, "a-b", "a_b", "a b", "a?b"]]
    assert len(set(parts)) == len(parts)
    for safe in ("weather_agent_basic", "run-3f9a2c1e", "v1.2.3"):
        assert key_part(safe) == safe


@pytest.mark.parametrize("bad", ["..", "../x", "a/b", "", ".hidden", "-x", "a\x00b", "a b"])
def test_join_key_refuses_unsafe_segments(bad: str) -> None:
    with pytest.raises(ValueError, match="not a safe key segment"):
        join_key("ok", bad)


def test_parse_s3_target_with_options() -> None:
    creds = S3Credentials(access_key_id="AK", secret_access_key="SK")  # type: ignore[arg-type]
    target = parse_target(
        "s3://reports-bucket/nightly/agents/",
        endpoint_url="http://127.0.0.1:8333",
        region="eu-west-1",
        path_style=True,
        credentials=creds,
    )
    assert isinstance(target, S3Target)
    assert (target.bucket, target.prefix, target.region) == (
        "reports-bucket",
        "nightly/agents",
        "eu-west-1",
    )
    assert target.url == "s3://reports-bucket/nightly/agents"
    assert "SK" not in repr(target) and "SK" not in target.model_dump_json()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s3://Bad_Bucket/x", "is not a valid S3 bucket name"),
        ("s3://ab/x", "is not a valid S3 bucket name"),
        ("s3://bucket/a/../b", "prefix segment '..' is not a safe key segment"),
        ("s3://bucket/a/%00", "prefix segment '%00' is not a safe key segment"),
        ("s3://bucket/x?versionId=1", "must not have a query or fragment"),
        ("gs://bucket/x", "scheme 'gs' is not supported"),
        ("   ", "publish target is empty"),
    ],
)
def test_bad_targets_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_target(text)


def test_local_targets(tmp_path: Path) -> None:
    assert parse_target(str(tmp_path)) == LocalTarget(path=tmp_path)
    assert parse_target(f"file://{tmp_path}") == LocalTarget(path=tmp_path)
    assert parse_target(tmp_path) == LocalTarget(path=tmp_path)


def test_local_store_round_trip_and_refuses_escaping_keys(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "root")
    store.put("a/b.json", b"{}", "application/json", None)
    assert store.get("a/b.json") == b"{}" and store.get("a/none.json") is None
    assert store.url("a/b.json") == (tmp_path / "root" / "a" / "b.json").as_uri()
    with pytest.raises(ValueError, match="not a safe key segment"):
        store.put("../escape.json", b"x", "application/json", None)
    assert not (tmp_path / "escape.json").exists()


def test_s3_urls() -> None:
    def url(**options: object) -> str:
        return S3Store(S3Target(bucket="reports", prefix="p/q", **options)).url(
            "set/run/report.html"
        )  # type: ignore[arg-type]

    assert url() == "https://reports.s3.us-east-1.amazonaws.com/p/q/set/run/report.html"
    assert url(region="eu-west-1").startswith("https://reports.s3.eu-west-1.amazonaws.com/")
    assert url(endpoint_url="http://127.0.0.1:8333", path_style=True) == (
        "http://127.0.0.1:8333/reports/p/q/set/run/report.html"
    )
    assert url(endpoint_url="https://minio.example.org") == (
        "https://reports.minio.example.org/p/q/set/run/report.html"
    )
    assert url(public_url="https://evals.example.org/") == (
        "https://evals.example.org/set/run/report.html"
    )


def _stubbed(code: str, status: int) -> tuple[S3Store, Stubber]:
    store = S3Store(
        S3Target(
            bucket="reports",
            region="us-east-1",
            endpoint_url="http://127.0.0.1:9",
            credentials=S3Credentials(access_key_id="a", secret_access_key="b"),  # type: ignore[arg-type]
        )
    )
    stubber = Stubber(store.client())
    stubber.add_client_error("put_object", service_error_code=code, http_status_code=status)
    return store, stubber


@pytest.mark.parametrize(
    ("code", "status", "transient"),
    [
        ("SlowDown", 503, True),
        ("InternalError", 500, True),
        ("AccessDenied", 403, False),
        ("NoSuchBucket", 404, False),
    ],
)
def test_s3_errors_say_whether_a_retry_can_help(code: str, status: int, transient: bool) -> None:
    store, stubber = _stubbed(code, status)
    with (
        stubber,
        pytest.raises(StoreError, match=f"cannot upload s3://reports/k.html: {code}") as info,
    ):
        store.put("k.html", b"x", "text/html; charset=utf-8", None)
    assert info.value.transient is transient


def test_s3_get_of_a_missing_key_is_none_and_sends_content_type() -> None:
    store = S3Store(
        S3Target(
            bucket="reports",
            prefix="pre",
            region="us-east-1",
            endpoint_url="http://127.0.0.1:9",
            credentials=S3Credentials(access_key_id="a", secret_access_key="b"),  # type: ignore[arg-type]
        )
    )
    with Stubber(store.client()) as stubber:
        stubber.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
        assert store.get("set/runs.json") is None
        stubber.add_response(
            "put_object",
            {},
            {
                "Bucket": "reports",
                "Key": "pre/set/index.html",
                "Body": b"<html>",
                "ContentType": "text/html; charset=utf-8",
                "CacheControl": "no-cache",
            },
        )
        store.put("set/index.html", b"<html>", "text/html; charset=utf-8", "no-cache")
        stubber.add_response(
            "get_object",
            {"Body": io.BytesIO(b"{}")},
            {"Bucket": "reports", "Key": "pre/set/latest.json"},
        )
        assert store.get("set/latest.json") == b"{}"
        stubber.assert_no_pending_responses()


def test_unreachable_s3_is_a_transient_error() -> None:
    store = S3Store(
        S3Target(
            bucket="reports",
            region="us-east-1",
            endpoint_url="http://127.0.0.1:9",  # discard port: nothing listens
            credentials=S3Credentials(access_key_id="a", secret_access_key="b"),  # type: ignore[arg-type]
        ),
        connect_timeout_s=1,
    )
    with pytest.raises(StoreError, match=r"cannot upload s3://reports/x\.json") as info:
        store.put("x.json", b"{}", "application/json", None)
    assert info.value.transient
