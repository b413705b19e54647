"""A real MCP server over stdio, written with the official SDK's ``MCPServer`` (what mcp
1.x called FastMCP): an order desk with two tools and a counter of its own, so a test can
tell one server process (one trial's) from another.

Run as ``python tests/support/mcp_orders.py`` (``--http PORT``: at
``http://127.0.0.1:PORT/mcp``, streamable HTTP); each process starts with the same orders,
so a refund made in one trial is never seen by the next. ``MCP_ORDERS_HANG=1`` makes
``lookup_order`` never answer (a trial that times out inside an MCP call).
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("orders")

_ORDERS: dict[str, dict[str, object]] = {
    "A-1": {"id": "A-1", "item": "kettle", "amount": 42.0, "status": "delivered"},
    "A-2": {"id": "A-2", "item": "toaster", "amount": 10.0, "status": "shipped"},
}
_calls = {"count": 0}


@server.tool()
async def lookup_order(order_id: str) -> dict[str, object]:
    """Look up an order: what was ordered, for how much, and its status.

    Args:
        order_id: The order's id, e.g. "A-1".
    """
    _calls["count"] += 1
    if os.environ.get("MCP_ORDERS_HANG") == "1":
        await asyncio.sleep(3600)
    order = _ORDERS.get(order_id)
    if order is None:
        raise ValueError(f"there is no order {order_id}")
    return {**order, "pid": os.getpid(), "calls": _calls["count"]}


@server.tool()
def refund_order(order_id: str, reason: str) -> str:
    """Refund an order in full.

    Args:
        order_id: The order's id.
        reason: Why, in a few words.
    """
    _calls["count"] += 1
    order = _ORDERS[order_id]
    if order["status"] == "refunded":
        return f"{order_id} was already refunded"
    order["status"] = "refunded"
    return f"refunded {order_id}: {order['amount']}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":  # a streamable-HTTP server instead
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
