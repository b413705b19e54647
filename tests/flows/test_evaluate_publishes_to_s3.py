"""The evaluate flow publishing to a real S3-compatible store (SeaweedFS on 127.0.0.1),
with credentials from a Prefect Secret block, and its Prefect UI artifacts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prefect.blocks.system import Secret
from prefect.client.orchestration import get_client
from support.seaweed import SeaweedFS

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models.request import RunRequest, S3Options

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
BUCKET = "nightly-reports"


@pytest.fixture(scope="module")
def store(shared_seaweed: SeaweedFS) -> SeaweedFS:
    """The session's store (tests/conftest.py), with this module's bucket."""
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    return shared_seaweed


async def test_the_flow_publishes_reports_to_s3_and_links_them_in_prefect(store, tmp_path):
    await Secret(
        value={"aws_access_key_id": store.access_key, "aws_secret_access_key": store.secret_key}
    ).save("s3-reports", overwrite=True)
    params = RunRequest(
        agent="examples.weather.agent:agent",
        evalset=str(ROOT / "examples/weather/weather.evalset.json"),
        config=str(ROOT / "examples/weather/eval_config.json"),
        runs=2,
        output_dir=str(tmp_path / "out"),
        publish_to=f"s3://{BUCKET}/team-a",
        s3=S3Options(
            endpoint_url=store.endpoint_url,
            region=store.region,
            path_style=True,
            credentials_secret="s3-reports",
        ),
    )
    outcome = await evaluate(**params.flow_parameters())
    run = outcome.run
    prefix = f"team-a/weather_agent_basic_tests/{outcome.run_dir.name}"
    client = store.client()

    def get(key: str) -> tuple[str, bytes]:
        obj = client.get_object(Bucket=BUCKET, Key=key)
        return obj["ContentType"], obj["Body"].read()

    kind, html = get(f"{prefix}/report.html")
    assert kind == "text/html; charset=utf-8" and b"Weather Agent Basic Tests" in html
    kind, body = get(f"{prefix}/results.json")
    assert kind == "application/json" and json.loads(body)["run_id"] == run.run_id
    kind, junit = get(f"{prefix}/junit.xml")
    assert kind == "application/xml" and b"weather_lookup_simple" in junit
    kind, latest = get("team-a/weather_agent_basic_tests/latest.json")
    assert kind == "application/json" and json.loads(latest)["run_id"] == run.run_id
    kind, index = get("team-a/weather_agent_basic_tests/index.html")
    assert kind == "text/html; charset=utf-8" and run.run_id.encode() in index
    # the report link opens for a reader without credentials (presigned), where the
    # store's plain URL of the same object is refused
    assert outcome.report_url and outcome.report_url.startswith(
        f"{store.endpoint_url}/{BUCKET}/{prefix}/report.html?"
    )
    assert "X-Amz-Signature=" in outcome.report_url
    with urllib.request.urlopen(outcome.report_url, timeout=10) as response:
        assert response.status == 200 and b"Weather Agent Basic Tests" in response.read()
    plain = outcome.report_url.split("?")[0]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(plain, timeout=10)
    assert refused.value.code == 403
    assert json.loads(latest)["report_url"].startswith(plain + "?")

    async with get_client() as prefect:
        artifacts = await prefect.read_artifacts()
    by_type = {a.type: a for a in artifacts if a.key and "weather-agent-basic-tests" in a.key}
    assert {"table", "markdown", "progress"} <= set(by_type)
    links = [a for a in artifacts if a.type == "markdown" and outcome.report_url in str(a.data)]
    assert links, "a Prefect artifact links to the published report"
    progress = [a for a in artifacts if a.type == "progress"]
    assert progress and progress[-1].data == 100.0
