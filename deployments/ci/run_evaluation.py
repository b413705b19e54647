#!/usr/bin/env python3
"""Start an evaluation from CI and wait for it: the flow run's id and URL on stdout, the
exit status its outcome (0 completed, 1 anything else, 2 could not start).

Needs only Python 3 and PREFECT_API_URL (plus PREFECT_API_KEY on Prefect Cloud); no
Prefect install on the CI machine. Parameters are the evaluate flow's, as JSON; what is
left out takes the deployment's defaults:

    python deployments/ci/run_evaluation.py evaluate/on-agent-deployed \\
        '{"agent": "my_agents.support:agent", "agent_version": "'"$VERSION"'"}'

Uses ``POST /deployments/{id}/create_flow_run``, then polls ``GET /flow_runs/{id}``.
Transient API errors (connection refused or reset, timeouts, 408, 429, 5xx) are retried
with backoff for about a minute per call; the run is created with an idempotency key, so
a retried create never starts a second run.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any

FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


TRANSIENT_STATUS = {408, 429, 500, 502, 503, 504}
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""The waits between attempts of one call (a server's Retry-After, when longer, wins)."""


def _transient(exc: Exception) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code in TRANSIENT_STATUS
    return isinstance(exc, (urllib.error.URLError, TimeoutError, ConnectionError))


def _retry_after_s(exc: Exception) -> float:
    value = exc.headers.get("Retry-After") if isinstance(exc, urllib.error.HTTPError) else None
    try:
        return min(float(value), 60.0) if value else 0.0
    except ValueError:
        return 0.0


def _call(api: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if os.environ.get("PREFECT_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['PREFECT_API_KEY']}"
    data = None if body is None else json.dumps(body).encode()
    for delay in (*RETRY_DELAYS_S, None):
        request = urllib.request.Request(f"{api}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except Exception as exc:
            if delay is None or not _transient(exc):
                raise
            wait = max(delay, _retry_after_s(exc))
            print(f"{method} {path}: {exc}; retrying in {wait:g} s", file=sys.stderr)
            time.sleep(wait)
    raise AssertionError("unreachable")


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    api = os.environ.get("PREFECT_API_URL", "").rstrip("/")
    if not api:
        print("PREFECT_API_URL is not set", file=sys.stderr)
        return 2
    name = argv[1]
    parameters = json.loads(argv[2]) if len(argv) == 3 else {}
    timeout_s = float(os.environ.get("AGENTFLOW_EVAL_TIMEOUT_S", "3600"))
    try:
        flow_name, deployment_name = name.split("/", 1)
        parts = (flow_name, deployment_name)
        quoted = "/".join(urllib.parse.quote(part, safe="") for part in parts)
        deployment = _call(api, "GET", f"/deployments/name/{quoted}")
        run = _call(
            api,
            "POST",
            f"/deployments/{deployment['id']}/create_flow_run",
            # the same key on a retried create: the server returns the run it made
            {"parameters": parameters, "tags": ["ci"], "idempotency_key": str(uuid.uuid4())},
        )
    except (urllib.error.URLError, ValueError, KeyError) as exc:
        detail = exc.read().decode() if isinstance(exc, urllib.error.HTTPError) else str(exc)
        print(f"could not start {name}: {detail}", file=sys.stderr)
        return 2
    ui = api.removesuffix("/api")
    print(f"flow run {run['id']} ({run['name']}): {ui}/runs/flow-run/{run['id']}", flush=True)
    deadline = time.monotonic() + timeout_s
    state = run.get("state") or {}
    while (state.get("type") or "") not in FINAL:
        if time.monotonic() > deadline:
            print(f"flow run {run['id']} still {state.get('name')} after {timeout_s:g} s")
            return 1
        time.sleep(2)
        state = _call(api, "GET", f"/flow_runs/{run['id']}").get("state") or {}
    print(f"flow run {run['id']}: {state.get('name')} {state.get('message') or ''}".rstrip())
    return 0 if state.get("type") == "COMPLETED" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
