"""The weather example written with LangGraph (``agent.py``: ``agent``, a compiled graph),
evaluated with the weather example's eval set and config (:data:`EVALSET`, :data:`CONFIG`).

In a checkout: ``agentflow-eval run examples.langgraph_weather
examples/weather/weather.evalset.json --config examples/weather/eval_config.json``.
"""

from pathlib import Path

__all__ = ["CONFIG", "EVALSET", "FOLDER"]

FOLDER = Path(__file__).resolve().parent
EVALSET = FOLDER.parent / "weather" / "weather.evalset.json"
CONFIG = FOLDER.parent / "weather" / "eval_config.json"
