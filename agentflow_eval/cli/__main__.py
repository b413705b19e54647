"""``python -m agentflow_eval.cli``: the ``agentflow-eval`` command."""

from agentflow_eval.cli import console

console()
