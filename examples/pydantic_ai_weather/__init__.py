"""The example weather agent written with Pydantic AI (``agent.py``: ``agent``), evaluated
with the weather example's eval set and config (``examples/weather/``)."""
