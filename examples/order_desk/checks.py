"""An end-state check of one's own: a function given the trial's environment, whose
return value the eval set compares with what it expects."""

from __future__ import annotations

import contextlib

from agentflow_eval import Environment

from .environment import connect

__all__ = ["refunded_total"]


def refunded_total(environment: Environment) -> float:
    """The sum of every refund the database holds."""
    assert environment.database is not None
    with contextlib.closing(connect(environment.database)) as db:
        (total,) = db.execute("SELECT COALESCE(SUM(amount), 0) FROM refunds").fetchone()
    return float(total)
