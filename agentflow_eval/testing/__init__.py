"""Offline test doubles that speak real protocols: a scripted OpenAI-compatible server."""

from agentflow_eval.testing.openai_server import Reply, ScriptedOpenAIServer

__all__ = ["Reply", "ScriptedOpenAIServer"]
