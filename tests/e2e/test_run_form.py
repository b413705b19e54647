"""The custom-run form of the evaluate deployment, as the Prefect UI of a real server
renders it in headless Chromium: the fields with their titles, the defaults filled in,
choices as a pick-list, the S3 options in one group. The screenshot it takes is the one
in docs/prefect-run-form.png: AGENTFLOW_FORM_SCREENSHOT=docs/prefect-run-form.png writes
it there when the form changes. The server is the session's (tests/e2e/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from pathlib import Path

import pytest

from tests.support.cdp import open_page
from tests.support.chromium import chromium_binary, png_size
from tests.support.prefect_server import PrefectServer, deployable_copy, prefect_cli

pytestmark = pytest.mark.e2e
POOL = "e2e-run-form"

TITLES = [
    "Agent under test",
    "Eval set",
    "Config file",
    "Runs per case",
    "Trials in flight",
    "Trial timeout (seconds)",
    "Agent model",
    "Judge model",
    "Agent version",
    "Git commit",
    "Labels",
    "Output folder",
    "Publish to",
    "Endpoint URL",
    "Path-style addressing",
    "Report links",
    "Public base URL",
    "Link lifetime (hours)",
    "Provider keys (Prefect Secrets)",
    "Shards",
    "Shared storage (Prefect block)",
]


def test_the_custom_run_form_shows_titled_fields_with_their_defaults(
    tmp_path, shared_prefect: PrefectServer
):
    browser = chromium_binary()
    home = tmp_path / "home"
    home.mkdir()
    project = deployable_copy(tmp_path / "project", POOL)
    api_url = shared_prefect.api_url
    prefect_cli(home, api_url, "work-pool", "create", POOL, "--type", "process", cwd=project)
    prefect_cli(home, api_url, "deploy", "--name", "adhoc", cwd=project)
    with urllib.request.urlopen(f"{api_url}/deployments/name/evaluate/adhoc") as response:
        deployment = json.loads(response.read())
    url = f"{api_url.removesuffix('/api')}/deployments/deployment/{deployment['id']}/run"
    shot = Path(os.environ.get("AGENTFLOW_FORM_SCREENSHOT", tmp_path / "prefect-run-form.png"))

    async def look() -> tuple[str, list[str]]:
        async with open_page(browser, tmp_path / "profile", url) as page:
            text = await page.wait_for_text(*TITLES, timeout_s=90)
            values = await page.evaluate(
                "Array.from(document.querySelectorAll('input, textarea')).map(e => e.value)"
            )
            await page.screenshot(shot)
            return text, values

    text, values = asyncio.run(look())

    for title in TITLES:
        assert title in text
    assert "Property is type" not in text  # no "int | None" switches
    # the deployment's parameters and the built-in defaults are filled in
    for value in (
        "examples.weather.agent:agent",
        "examples/weather/weather.evalset.json",
        "5",
        "16",
        "120",
        "eval-results",
        "168",
        "1",
    ):
        assert value in values, (value, values)
    assert "presigned" in text  # the report-links pick-list shows its choice
    width, height = png_size(shot)
    assert width >= 1000 and height >= 1200
