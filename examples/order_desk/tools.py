"""The order desk's two tools. Each works on the running trial's own database, which
it is given as ``environment`` (the LiteLLM agent fills that parameter in; the model
never sees it).

``refund_order`` writes what it is asked to, as a back-office API would: the desk's
policy (refund delivered orders, once) is the agent's to keep, and the eval set checks
that it did by what the database holds afterwards.
"""

from __future__ import annotations

import contextlib
from typing import Any

from agentflow_eval import Environment

from .environment import connect

__all__ = ["lookup_order", "refund_order"]

_FIELDS = ("id", "customer", "item", "amount", "status")


def _database(environment: Environment | None) -> Any:
    if environment is None or environment.database is None:
        raise RuntimeError("the order desk's tools need the trial's order database")
    return environment.database


def lookup_order(order_id: str, environment: Environment) -> dict[str, Any]:
    """Look up an order: who ordered what, for how much, and its status.

    Args:
        order_id: The order's id, e.g. "A-1001".
    """
    with contextlib.closing(connect(_database(environment))) as db:
        row = db.execute(
            "SELECT id, customer, item, amount, status FROM orders WHERE id = ?", (order_id,)
        ).fetchone()
    if row is None:
        return {"error": f"there is no order {order_id}"}
    return dict(zip(_FIELDS, row, strict=True))


def refund_order(order_id: str, reason: str, environment: Environment) -> dict[str, Any]:
    """Refund an order in full and mark it refunded.

    Args:
        order_id: The order's id, e.g. "A-1001".
        reason: Why the customer wants the refund, in a few words.
    """
    with contextlib.closing(connect(_database(environment))) as db, db:
        found = db.execute("SELECT amount FROM orders WHERE id = ?", (order_id,)).fetchone()
        if found is None:
            return {"error": f"there is no order {order_id}"}
        db.execute("INSERT INTO refunds VALUES (?, ?, ?)", (order_id, found[0], reason))
        db.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order_id,))
    return {"refunded": order_id, "amount": found[0]}
