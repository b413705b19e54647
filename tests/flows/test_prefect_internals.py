"""The pieces of Prefect we use beyond its documented API still work as we use them. When
an upgrade moves one, the failing test names it (see flows/support/prefect_internals.py)."""

from __future__ import annotations

import importlib
import inspect

import pytest
from prefect.settings import (
    PREFECT_API_URL,
    PREFECT_SERVER_ALLOW_EPHEMERAL_MODE,
    temporary_settings,
)

from agentflow_eval.flows.support import prefect_internals


def test_the_api_app_factory_is_where_we_launch_it_from() -> None:
    module, name = prefect_internals.APP_FACTORY
    factory = getattr(importlib.import_module(module), name, None)
    assert callable(factory), f"{module}.{name} is gone: the temporary server cannot start"


def test_prefects_own_temporary_server_gets_the_environment_we_give_ours() -> None:
    from prefect.server.api import server

    source = inspect.getsource(server.SubprocessASGIServer)
    module, name = prefect_internals.APP_FACTORY
    assert f"{module}:{name}" in source, "Prefect serves its temporary API from another factory"
    for variable in ("PREFECT__SERVER_EPHEMERAL", "PREFECT__SERVER_FINAL", "PREFECT_UI_ENABLED"):
        assert variable in prefect_internals.TEMPORARY_SERVER_ENV
        assert variable in source, f"Prefect no longer sets {variable} for its temporary server"


@pytest.mark.parametrize(
    ("api_url", "ephemeral", "allowed"),
    [(None, True, True), ("http://127.0.0.1:9/api", True, False), (None, False, False)],
)
def test_a_temporary_server_is_allowed_as_prefect_would_allow_one(
    api_url: str | None, ephemeral: bool, allowed: bool
) -> None:
    updates = {PREFECT_SERVER_ALLOW_EPHEMERAL_MODE: ephemeral}
    if api_url:
        updates[PREFECT_API_URL] = api_url
    restore = set() if api_url else {PREFECT_API_URL}
    with temporary_settings(updates=updates, restore_defaults=restore):
        assert prefect_internals.temporary_server_allowed() is allowed
