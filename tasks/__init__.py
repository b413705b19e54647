"""Prefect tasks, one per pipeline stage, thin wrappers over the core stages. Installed as
``agentflow_eval.tasks``."""
