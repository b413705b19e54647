"""The weather example written with the OpenAI Agents SDK (``agent.py``: ``agent``, an SDK
``Agent``), evaluated with the weather example's eval set and config::

    agentflow-eval run examples/openai_agents_weather examples/weather/weather.evalset.json \
        --config examples/weather/eval_config.json
"""
