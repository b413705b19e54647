"""A presigned report link printed by a real CLI run opens: the run publishes to
SeaweedFS with credentials from the environment (the access key id is then a known
variable's value), prints the link with everything else redacted, and the link — its
access key id kept, its signature as signed — answers HTTP 200. The copies stored in
published.json and latest.json are the link printed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.prefect_server import PrefectServer, prefect_env
from tests.support.seaweed import SeaweedFS

pytestmark = pytest.mark.e2e

AGENTFLOW_EVAL = str(Path(sys.executable).parent / "agentflow-eval")
ROOT = Path(__file__).resolve().parents[2]
BUCKET = "presigned-links"


@pytest.fixture(scope="module")
def seaweed(shared_seaweed: SeaweedFS) -> Iterator[SeaweedFS]:
    shared_seaweed.client().create_bucket(Bucket=BUCKET)
    yield shared_seaweed


def test_the_printed_presigned_link_opens_and_matches_the_stored_copies(
    tmp_path: Path, seaweed: SeaweedFS, shared_prefect: PrefectServer
) -> None:
    home = tmp_path / "prefect"
    home.mkdir()
    env = prefect_env(home, shared_prefect.api_url)
    env.update(
        AWS_ACCESS_KEY_ID=seaweed.access_key,
        AWS_SECRET_ACCESS_KEY=seaweed.secret_key,
        AWS_DEFAULT_REGION=seaweed.region,
    )
    weather = ROOT / "examples" / "weather"
    done = subprocess.run(
        [
            AGENTFLOW_EVAL,
            "run",
            "examples.weather.agent:agent",
            str(weather / "weather.evalset.json"),
            "--runs",
            "1",
            "--limit",
            "1",
            "--quiet",
            "--output",
            str(tmp_path / "out"),
            *seaweed.publish_flags(f"s3://{BUCKET}/nightly"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    printed = re.search(r"^published to .*: (http\S+)$", done.stdout, re.MULTILINE)
    assert printed is not None, done.stdout
    link = printed.group(1)
    assert "X-Amz-Signature=" in link and f"X-Amz-Credential={seaweed.access_key}" in link
    assert seaweed.secret_key not in done.stdout + done.stderr
    with urllib.request.urlopen(link, timeout=30) as response:
        assert response.status == 200
        assert b"<html" in response.read(4096).lower()

    (run_dir,) = (tmp_path / "out").glob("*/*")
    stored = json.loads((run_dir / "published.json").read_text())
    assert stored["urls"]["report"] == link
    latest_key = f"nightly/{run_dir.parent.name}/latest.json"
    latest = json.loads(seaweed.client().get_object(Bucket=BUCKET, Key=latest_key)["Body"].read())
    assert latest["report_url"] == link
