"""Finding the MCP test server's processes through ``/proc``: what a test asserts is gone
once a run is over."""

from __future__ import annotations

import sys
from pathlib import Path

SERVER = Path(__file__).with_name("mcp_orders.py")
"""The stdio MCP server the tests start (``tests/support/mcp_orders.py``)."""


def server_command() -> list[str]:
    return [sys.executable, str(SERVER)]


def server_pids() -> list[int]:
    """The live processes (not zombies) running the test server."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # it ended while we looked
        if str(SERVER).encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
