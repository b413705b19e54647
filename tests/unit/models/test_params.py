"""The evaluate flow's parameter model: flow parameters round-trip, blank text means not
given, S3 options and shards are checked. (The flow's signature and the form Prefect
builds from the model: tests/flows/test_evaluate_flow_params.py.)"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentflow_eval.models.request import RunRequest, S3Options, ShardSpec


def test_flow_parameters_round_trip() -> None:
    params = RunRequest(
        agent="a:b",
        evalset="e.json",
        runs=3,
        labels={"env": "ci"},
        s3=S3Options(endpoint_url="http://s3:9000", path_style=True),
        shard=ShardSpec(index=1, count=2, parent_run_id="p"),
    )
    assert RunRequest.from_flow_parameters(params.flow_parameters()) == params


def test_blank_text_means_not_given() -> None:
    params = RunRequest(
        agent="a:b",
        evalset="e.json",
        config="",
        runs="",
        judge_model=" ",
        shard={},
        s3={"endpoint_url": "", "public_url": ""},
    )
    assert params.config is None and params.runs is None and params.judge_model is None
    assert params.shard is None and params.s3.endpoint_url is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"report_links": "public"}, "needs public_url"),
        ({"link_expiry_hours": 169}, "less than or equal to 168"),
    ],
)
def test_s3_options_are_checked(options: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        S3Options(**options)


def test_a_shard_must_exist() -> None:
    with pytest.raises(ValidationError, match="not below count"):
        ShardSpec(index=2, count=2, parent_run_id="p")
