"""Every use of Prefect beyond its documented API, in one place.

The CLI boots Prefect's temporary API server itself (see
:mod:`agentflow_eval.flows.support.temporary_api`) the way Prefect's own
``SubprocessASGIServer`` does; that needs a few of Prefect's internals. Checked against
Prefect 3.8.8 through 3.9.1, the range the pin in pyproject (``prefect>=3.8.8,<3.10``)
allows so far; ``tests/flows/test_prefect_internals.py`` guards them on whatever is
installed: it fails with the name of the piece that moved.
"""

from __future__ import annotations

__all__ = [
    "APP_FACTORY",
    "TEMPORARY_SERVER_ENV",
    "temporary_server_allowed",
]

APP_FACTORY = ("prefect.server.api.server", "create_app")
"""Module and name of the factory of Prefect's API app (what ``uvicorn --factory`` runs)."""

TEMPORARY_SERVER_ENV = {
    "PREFECT__SERVER_EPHEMERAL": "1",
    "PREFECT__SERVER_FINAL": "1",
    "PREFECT_UI_ENABLED": "0",
}
"""The environment Prefect gives its own temporary server process: the app serves the API
only and knows it is the temporary (ephemeral) server."""


def temporary_server_allowed() -> bool:
    """Whether Prefect would start a temporary server itself: no API URL is configured
    and ephemeral servers are enabled (``PREFECT_SERVER_ALLOW_EPHEMERAL_MODE``)."""
    from prefect.settings import get_current_settings

    settings = get_current_settings()
    return not settings.api.url and bool(settings.server.ephemeral.enabled)
