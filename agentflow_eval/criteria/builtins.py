"""Imports every built-in criterion module so their ``@register`` calls run.

One import per line; add a module here when it registers criteria.
"""
# ruff: noqa: F401

import agentflow_eval.criteria.expectations
import agentflow_eval.criteria.judge_final_response
import agentflow_eval.criteria.judge_hallucinations
import agentflow_eval.criteria.judge_rubrics
import agentflow_eval.criteria.judge_safety
import agentflow_eval.criteria.response
import agentflow_eval.criteria.trajectory
