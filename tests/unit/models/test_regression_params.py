"""The regression flow's parameter model: each eval set's evaluate run gets its own fields,
the suite's shared ones and the suite's label; bad suites are refused naming the field.
(The flow's signature and its form: tests/flows/test_regression_flow_params.py.)"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentflow_eval.models.regression import REGRESSION_LABEL, RegressionParams
from agentflow_eval.models.request import RunRequest, S3Options

EVALS = [
    {"agent": "pkg.weather:agent", "evalset": "evals/weather.evalset.json", "runs": 3},
    {
        "agent": "pkg.notes:agent",
        "evalset": "evals/notes.evalset.json",
        "baseline": "s3://reports/agents/notes/20261101T030000Z-abc",
        "labels": {"team": "notes"},
        "judge_model": "openai/gpt-4o-mini",
    },
]


def test_each_eval_set_is_evaluated_with_its_fields_the_suites_and_its_label() -> None:
    params = RegressionParams(
        evals=EVALS,
        publish_to="s3://reports/agents",
        suite="nightly",
        fail_on_regression=True,
        s3=S3Options(endpoint_url="http://minio:9000", path_style=True),
        agent_version="2.4.1",
        labels={"env": "staging"},
        secrets={"OPENAI_API_KEY": "openai-api-key"},
    )
    tags = [params.tag("flow-1", index) for index in range(2)]
    assert tags == ["nightly@flow-1#0", "nightly@flow-1#1"]
    weather, notes = (params.evaluate_params(i, tag) for i, tag in enumerate(tags))
    assert isinstance(weather, RunRequest)
    assert (weather.agent, weather.evalset, weather.runs) == (
        "pkg.weather:agent",
        "evals/weather.evalset.json",
        3,
    )
    assert weather.baseline == "latest" and weather.publish_to == "s3://reports/agents"
    assert weather.fail_on_regression and weather.agent_version == "2.4.1"
    assert weather.s3.endpoint_url == "http://minio:9000"
    assert weather.secrets == {"OPENAI_API_KEY": "openai-api-key"}
    assert weather.labels == {"env": "staging", REGRESSION_LABEL: "nightly@flow-1#0"}
    assert notes.baseline == EVALS[1]["baseline"]  # its own baseline wins
    assert notes.judge_model == "openai/gpt-4o-mini"
    assert notes.labels == {"env": "staging", "team": "notes", REGRESSION_LABEL: tags[1]}
    # what a deployment run is started with passes the evaluate flow's own checks
    dumped = notes.model_dump(mode="json", exclude_none=True)
    assert RunRequest.model_validate(dumped) == notes


def test_flow_parameters_round_trip() -> None:
    params = RegressionParams(evals=EVALS, publish_to="out/published", labels={"a": "b"})
    assert RegressionParams.from_flow_parameters(params.flow_parameters()) == params


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"evals": []}, "at least 1 item"),
        ({"publish_to": ""}, "at least 1 character"),
        ({"labels": {REGRESSION_LABEL: "x"}}, "set by the suite"),
        ({"evals": [{**EVALS[0], "labels": {REGRESSION_LABEL: "x"}}]}, "set by the suite"),
        ({"evals": [{**EVALS[0], "agnet": "typo"}]}, "agnet"),
        ({"evals": [EVALS[0], EVALS[1], EVALS[0]]}, r"evals\[2\]: .* is already evals\[0\]"),
    ],
)
def test_bad_suites_are_refused_naming_the_field(change: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RegressionParams.model_validate({"evals": EVALS, "publish_to": "s3://r/a", **change})


def test_the_suites_efficiency_tolerances_reach_each_eval_set() -> None:
    params = RegressionParams.model_validate(
        {
            "evals": EVALS,
            "publish_to": "s3://reports/agents",
            "max_latency_increase": "25%",
            "max_cost_increase": "",
        }
    )
    weather = params.evaluate_params(0, params.tag("flow-1", 0))
    assert weather.max_latency_increase == 0.25 and weather.max_cost_increase is None
    assert weather.tolerances().of("latency") == 0.25
    with pytest.raises(ValidationError, match="max_token_increase"):
        RegressionParams.model_validate(
            {"evals": EVALS, "publish_to": "s3://r", "max_token_increase": "10"}
        )


def test_a_suite_entry_can_run_its_baseline_agent_beside_it() -> None:
    """A paired entry is evaluated against the agent it names, pair by pair, and not
    against the suite's latest (the two are one or the other)."""
    from agentflow_eval.models.regression import RegressionParams

    suite = RegressionParams.model_validate(
        {
            "evals": [
                {"agent": "a:new", "evalset": "x.json", "against": "a:old",
                 "until_decided": True, "max_trials": 400},
                {"agent": "a:new", "evalset": "y.json"},
            ],
            "publish_to": "s3://bucket/p",
        }
    )  # fmt: skip
    paired, plain = suite.evaluate_params(0, "t"), suite.evaluate_params(1, "t")
    assert (paired.against, paired.baseline, paired.until_decided) == ("a:old", None, True)
    assert paired.max_trials == 400
    assert plain.against is None and plain.baseline == "latest"
