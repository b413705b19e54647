"""Example agents and eval sets that ship with agentflow-eval (installed as
``agentflow_eval.examples``; in a checkout of the repository, also as ``examples``).

``python -m agentflow_eval.examples weather DIR`` copies an example's agent, eval set and
config into ``DIR`` of one's own project, and prints the command that evaluates it.
"""
