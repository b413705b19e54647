"""Imports every built-in criterion module so their ``@register`` calls run.

One import per line; add a module here when it registers criteria.
"""
# ruff: noqa: F401

import agentflow_eval.criteria.expectations
import agentflow_eval.criteria.intermediate
import agentflow_eval.criteria.judges.final_response
import agentflow_eval.criteria.judges.hallucinations
import agentflow_eval.criteria.judges.rubrics
import agentflow_eval.criteria.judges.safety
import agentflow_eval.criteria.response
import agentflow_eval.criteria.session_state
import agentflow_eval.criteria.trajectory
