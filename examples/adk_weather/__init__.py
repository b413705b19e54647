"""The weather agent of ``examples/weather`` written the Google ADK way (``agent.py``:
``root_agent``), evaluated with the same eval set and config::

    agentflow-eval run examples.adk_weather examples/weather/weather.evalset.json \\
        --config examples/weather/eval_config.json

The package imports its ``agent`` module, as ADK's own loader (``adk web``, ``adk run``)
expects of an agent folder.
"""

from . import agent

__all__ = ["agent"]
