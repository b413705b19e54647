"""agentflow-eval: evaluation for LLM agents, run as Prefect flows."""

__version__ = "0.1.0"
