"""The example weather agent (``agent.py``: ``agent``) with its eval set and config.

Installed, the agent is ``agentflow_eval.examples.weather.agent:agent`` and its files are
:data:`EVALSET` and :data:`CONFIG`; in a checkout, ``examples.weather.agent:agent`` and
``examples/weather/``.
"""

from pathlib import Path

__all__ = ["CONFIG", "EVALSET", "FOLDER"]

FOLDER = Path(__file__).resolve().parent
EVALSET = FOLDER / "weather.evalset.json"
CONFIG = FOLDER / "eval_config.json"
