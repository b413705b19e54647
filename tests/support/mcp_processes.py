"""Finding the MCP test server's processes through ``/proc``: what a test asserts is gone
once a run is over."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).with_name("mcp_orders.py")
"""The stdio MCP server the tests start (``tests/support/mcp_orders.py``)."""


def server_command() -> list[str]:
    return [sys.executable, str(SERVER)]


def server_pids(marker: str = str(SERVER)) -> list[int]:
    """The live processes (not zombies) with ``marker`` in their command line (default:
    the ones running the test server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # it ended while we looked
        if any(marker.encode() in part for part in cmdline) and state != "Z":
            found.append(int(entry.name))
    return found


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """The test server at a streamable-HTTP URL on a free port of 127.0.0.1, up until the
    block ends: its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([*server_command(), "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the HTTP MCP test server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
