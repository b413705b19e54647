"""The carrier's tracking as an MCP server (stdio), written with the official SDK: one
tool, ``track_shipment``, reading the trial's own order database, which it finds in
``$ORDER_DESK_DB`` (the trial's environment hands its variables to the servers it
starts). ``mcp_config.json`` names it, so each trial starts its own and stops it after.

Run by hand (``python -m examples.order_desk.shipping_server``) it waits for an MCP
client on stdin.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("shipping")


@server.tool()
def track_shipment(order_id: str) -> dict[str, Any]:
    """Where an order's parcel is: its carrier, its tracking status and expected delivery.

    Args:
        order_id: The order's id, e.g. "A-1002".
    """
    with contextlib.closing(sqlite3.connect(os.environ["ORDER_DESK_DB"])) as db:
        row = db.execute(
            "SELECT carrier, status, eta FROM shipments WHERE order_id = ?", (order_id,)
        ).fetchone()
    if row is None:
        raise ValueError(f"no shipment for order {order_id}")
    carrier, status, eta = row
    return {"order_id": order_id, "carrier": carrier, "status": status, "eta": eta}


if __name__ == "__main__":
    server.run()
