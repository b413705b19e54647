"""The regression flow's parameters: the model and the flow's signature agree, and the form
has titles and no nulls."""

from __future__ import annotations

import inspect

from prefect.utilities.callables import parameter_schema

from agentflow_eval.flows.regression import regression
from agentflow_eval.models.regression import RegressionParams

EVALS = [{"agent": "pkg.weather:agent", "evalset": "evals/weather.evalset.json", "runs": 3}]


def test_the_flow_takes_exactly_the_models_fields_with_the_same_defaults() -> None:
    signature = inspect.signature(regression.fn)
    assert list(signature.parameters) == list(RegressionParams.model_fields)
    blank = RegressionParams(evals=EVALS, publish_to="s3://reports/agents")
    for name, parameter in signature.parameters.items():
        if parameter.default is inspect.Parameter.empty:
            assert RegressionParams.model_fields[name].is_required(), name
        else:
            assert parameter.default == getattr(blank, name), name


def test_the_form_has_titles_and_no_nulls() -> None:
    schema = parameter_schema(regression.fn).model_dump()
    properties = schema["properties"]
    assert schema["required"] == ["evals", "publish_to"]
    assert properties["evals"]["title"] == "Eval sets"
    assert properties["evaluate_deployment"]["default"] == "evaluate/adhoc"
    for name, prop in properties.items():
        assert prop.get("title") or "$ref" in prop, name
        assert "anyOf" not in prop, f"{name} would render as a type switch"
        assert prop.get("default", "") is not None, f"{name} has a null default"
    entry = schema["definitions"]["SuiteEntry"]
    assert entry["required"] == ["evalset"]  # no agent: an eval set of component cases
