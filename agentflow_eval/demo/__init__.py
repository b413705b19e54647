"""The offline demo model and judge: agentflow-eval's built-in stand-in for an LLM."""
