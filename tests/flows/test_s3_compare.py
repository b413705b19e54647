"""``compare`` against runs published to a real S3-compatible store (SeaweedFS):
``latest`` resolved from a publish prefix, run folders and results.json read by URI."""

from __future__ import annotations

import json
import socket
from datetime import timedelta
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir
from support.seaweed import SeaweedFS

from agentflow_eval.cli import main
from agentflow_eval.compare import load_side
from agentflow_eval.models.request import S3Options
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.storage.targets import S3Credentials, parse_target

pytestmark = pytest.mark.e2e

BUCKET = "agentflow-compare"
PREFIX = "nightly/agents"
EVAL_SET = "travel_agent_nightly"
REGRESSED = "weather_lookup_simple"


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> SeaweedFS:
    """The session's store (tests/conftest.py), with this module's bucket."""
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    return shared_seaweed


def _night(run: RunResult, run_id: str, day: int) -> RunResult:
    started = run.started_at + timedelta(days=day)
    return run.model_copy(update={"run_id": run_id, "started_at": started, "finished_at": started})


@pytest.fixture(scope="module")
def nights(seaweed: SeaweedFS, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two good nights published to the store, and tonight's regressed run, not yet
    published."""
    root = tmp_path_factory.mktemp("runs")
    good, _eval_set = sample_run(trials=10)
    bad, _ = sample_run(trials=10, behaviour_of={REGRESSED: "wrong_tool"})
    target = parse_target(
        f"s3://{BUCKET}/{PREFIX}",
        endpoint_url=seaweed.endpoint_url,
        region=seaweed.region,
        path_style=True,
        credentials=S3Credentials(
            access_key_id=seaweed.access_key,
            secret_access_key=seaweed.secret_key,  # type: ignore[arg-type]
        ),
    )
    dirs = {}
    for run_id, run, day, publish in [
        ("night1", good, 0, True),
        ("night2", good, 1, True),
        ("tonight", bad, 2, False),
    ]:
        night = _night(run, run_id, day)
        dirs[run_id] = write_run_dir(root / run_folder(night), night)
        if publish:
            assert publish_run(dirs[run_id], target).published
    return dirs


@pytest.fixture
def s3_env(seaweed: SeaweedFS, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Credentials from the standard chain (as a CI job sets them); the CLI's S3 flags."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", seaweed.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", seaweed.secret_key)
    return [
        "--s3-endpoint-url",
        seaweed.endpoint_url,
        "--s3-region",
        seaweed.region,
        "--s3-path-style",
    ]


def _json(capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    return json.loads(capsys.readouterr().out)


def test_latest_under_a_publish_prefix(
    nights: dict[str, Path], s3_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tonight = str(nights["tonight"])
    argv = ["compare", "latest", tonight, "--publish-to", f"s3://{BUCKET}/{PREFIX}", *s3_env]
    assert main([*argv, "--json", "--fail-on-regression"]) == 1
    document = _json(capsys)
    assert document["baseline"]["run_id"] == "night2"  # the newest published run
    assert document["baseline"]["source"] == (
        f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/20261121T023000Z-night2/results.json"
    )
    verdicts = {case["case_id"]: case["verdict"] for case in document["cases"]}
    assert verdicts[REGRESSED] == "regression"

    # the same, spelled as the eval set's prefix + /latest
    spelled = f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/latest"
    assert main(["compare", spelled, tonight, *s3_env, "--json"]) == 0
    assert _json(capsys)["baseline"]["run_id"] == "night2"


def test_latest_is_never_the_candidate_itself(
    seaweed: SeaweedFS,
    nights: dict[str, Path],
    s3_env: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # night2 compared with "latest" after it was published: the baseline is night1
    night2 = f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/20261121T023000Z-night2"
    argv = ["compare", "latest", night2, "--publish-to", f"s3://{BUCKET}/{PREFIX}", *s3_env]
    assert main([*argv, "--json"]) == 0
    document = _json(capsys)
    assert (document["baseline"]["run_id"], document["candidate"]["run_id"]) == ("night1", "night2")
    assert document["candidate"]["source"] == f"{night2}/results.json"
    assert document["overall"]["verdict"] == "no significant change"


def test_a_published_results_json_reads_like_the_local_one(
    seaweed: SeaweedFS, nights: dict[str, Path]
) -> None:
    uri = f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/20261120T023000Z-night1/results.json"
    side = load_side(
        uri,
        s3=S3Options(endpoint_url=seaweed.endpoint_url, region=seaweed.region, path_style=True),
        credentials=S3Credentials(
            access_key_id=seaweed.access_key,
            secret_access_key=seaweed.secret_key,  # type: ignore[arg-type]
        ),
    )
    assert side.source == uri
    assert side.run == load_side(nights["night1"]).run


def test_missing_runs_and_an_unreachable_store(
    nights: dict[str, Path], s3_env: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tonight = str(nights["tonight"])
    assert (
        main(["compare", "latest", tonight, "--publish-to", f"s3://{BUCKET}/elsewhere", *s3_env])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"s3://{BUCKET}/elsewhere/{EVAL_SET}: no runs.json" in err

    folder = f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/20991231T000000Z-nothing"
    assert main(["compare", folder, tonight, *s3_env]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{folder}/results.json: no such file" in err

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    unreachable = ["--s3-endpoint-url", f"http://127.0.0.1:{closed}", "--s3-path-style"]
    assert (
        main(["compare", f"s3://{BUCKET}/{PREFIX}/{EVAL_SET}/latest", tonight, *unreachable]) == 3
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot download" in err
