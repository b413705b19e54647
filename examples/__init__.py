"""Example agents and eval sets that ship with agentflow-eval."""
