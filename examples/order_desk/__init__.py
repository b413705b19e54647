"""The order-desk example: an agent that refunds orders in a SQLite database, each
trial on a fresh copy of the seeded data (``environment.py``), judged by what the
database holds afterwards, not by what the agent says.

Installed, the agent is ``agentflow_eval.examples.order_desk.agent:agent`` and its files
are :data:`EVALSET` and :data:`CONFIG`; in a checkout, ``examples.order_desk.agent:agent``
and ``examples/order_desk/``.
"""

from pathlib import Path

__all__ = ["CONFIG", "EVALSET", "FOLDER"]

FOLDER = Path(__file__).resolve().parent
EVALSET = FOLDER / "order_desk.evalset.json"
CONFIG = FOLDER / "eval_config.json"
