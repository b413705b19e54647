"""The evaluate flow's parameters: one model and the flow's signature agree, and the form
Prefect builds from them has titles, filled-in defaults and no nulls."""

from __future__ import annotations

import inspect

from prefect.utilities.callables import parameter_schema

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.models import defaults
from agentflow_eval.models.request import RunRequest


def test_the_flow_takes_exactly_the_models_fields_with_the_same_defaults() -> None:
    signature = inspect.signature(evaluate.fn)
    # and, last, a run a front door planned itself (the CLI), which the form never shows
    assert list(signature.parameters) == [*RunRequest.model_fields, "planned"]
    assert "planned" not in parameter_schema(evaluate.fn).properties
    blank = RunRequest(evalset="e.json")  # no agent: a set of component cases
    parameters = dict(signature.parameters)
    assert parameters.pop("planned").default is None
    # the flow needs the eval set's file; a Python door may hand the eval set over instead
    assert parameters.pop("evalset").default is inspect.Parameter.empty
    assert blank.evalset == "e.json" and RunRequest().evalset is None
    for name, parameter in parameters.items():
        assert parameter.default is not inspect.Parameter.empty, name
        assert parameter.default == getattr(blank, name), name


def test_the_form_has_human_titles_real_defaults_and_no_nulls() -> None:
    schema = parameter_schema(evaluate.fn).model_dump()
    properties = schema["properties"]
    assert schema["required"] == ["evalset"]  # no agent: every case is a component case
    assert properties["agent"]["default"] == ""
    assert properties["runs"]["title"] == "Runs per case"
    assert properties["runs"]["default"] == defaults.RUNS
    assert properties["max_concurrency"]["default"] == defaults.MAX_CONCURRENCY
    assert properties["trial_timeout_s"]["default"] == defaults.TRIAL_TIMEOUT_S
    assert properties["output_dir"]["default"] == defaults.OUTPUT_DIR
    for name, prop in properties.items():
        assert prop.get("title") or "$ref" in prop, name
        assert "anyOf" not in prop, f"{name} would render as a type switch"
        assert prop.get("default", "") is not None, f"{name} has a null default"
    s3 = schema["definitions"]["S3Options"]["properties"]
    assert s3["report_links"]["enum"] == ["presigned", "public", "endpoint"]
    assert all(p.get("default", "") is not None for p in s3.values())
