"""The CLI's early-started temporary Prefect API: it serves a flow run, stands down when
Prefect already has an API, and is stopped afterwards."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

from flows.local_api import LocalPrefectAPI

pytestmark = pytest.mark.e2e


@flow
async def _which_api() -> str:
    async with get_client() as client:
        return str(client.api_url)


@pytest.fixture
def no_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    with temporary_settings(
        updates={PREFECT_HOME: tmp_path / "prefect"}, restore_defaults={PREFECT_API_URL}
    ):
        yield


def test_a_flow_runs_against_the_early_started_server(no_api) -> None:
    api = LocalPrefectAPI.launch()
    assert api is not None
    with api.serving() as url:
        assert url == api.url
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
            assert response.status == 200
        assert asyncio.run(_which_api()).rstrip("/") == url
        EventsWorker.drain_all()
        APILogWorker.drain_all()
    assert api.process.poll() is None  # it serves until exit, as Prefect's own server does
    api.stop()
    assert api.process.poll() is not None


def test_it_stands_down_when_prefect_already_has_an_api(no_api) -> None:
    api = LocalPrefectAPI.launch()
    assert api is not None
    with (
        temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}),
        api.serving() as url,
    ):
        assert url is None
        assert api.process.poll() is not None  # stood down at once


def test_nothing_is_launched_when_the_environment_names_an_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    assert LocalPrefectAPI.launch() is None
