"""Prefect flows, one per file: the evaluate flow (one eval set). Installed as
``agentflow_eval.flows``."""
