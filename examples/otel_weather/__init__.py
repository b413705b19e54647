"""The example weather agent as a plain function around an OpenTelemetry-instrumented
Pydantic AI agent (``agent.py``: ``agent``): agentflow-eval reads what it did from its
spans. Evaluate it with the weather example's eval set and config (``examples/weather/``).
"""
