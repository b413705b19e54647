"""The traces request: one field per setting, the command's flags derived from them, each
value checked as the field checks it, every setting in docs/traces.md's table, and the
run request of each version built from the settings the two share."""

from __future__ import annotations

import argparse
import re

import pytest
from pydantic import ValidationError

from agentflow_eval.cli.request_flags import add_request_flags, request_fields_given
from agentflow_eval.cli.traces import TRACES_FLAGS
from agentflow_eval.models.request import S3Options, flag_of
from agentflow_eval.models.traces_request import TracesRequest
from tests.unit.traces.conftest import ROOT


def _parsed(*argv: str) -> TracesRequest:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_request_flags(parser, TRACES_FLAGS, TracesRequest)
    args = parser.parse_args(list(argv))
    return TracesRequest.model_validate(
        {**request_fields_given(args, TracesRequest), "source": "s"}
    )


def test_flags_are_the_requests_fields() -> None:
    request = _parsed(
        "--config", "c.json", "--sample-rate", "10%", "--stratum", "tenant", "--stratum",
        "gen_ai.request.model", "--case-attribute", "app.probe", "--max-objects", "50",
        "--include", "traces-*.json", "--label", "env=prod", "--s3-path-style",
    )  # fmt: skip
    assert request.sample_rate == 0.1 and request.strata == ["tenant", "gen_ai.request.model"]
    assert request.case_attribute == "app.probe" and request.max_objects == 50
    assert request.include == ["traces-*.json"] and request.labels == {"env": "prod"}
    assert request.s3.path_style and request.version_attribute == "service.version"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"sample_rate": 1.5}, "between 0 and 1"),
        ({"sample_rate": "ten"}, "expected a rate"),
        ({"strata": ["tenant", "tenant"]}, "named twice"),
        ({"case_attribute": "not an attribute!"}, "not an attribute name"),
        ({"include": []}, "at least one pattern"),
        ({"max_objects": -1}, "at least 1"),
    ],
)
def test_bad_values_are_refused_in_the_fields_words(values: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TracesRequest.model_validate({"source": "s", "config": "c", **values})


def test_each_versions_run_request_takes_the_settings_they_share() -> None:
    request = TracesRequest(
        source="s3://b/p",
        config="c.json",
        judge_model="openai/gpt-4o-mini",
        publish_to="s3://r/x",
        s3=S3Options(endpoint_url="http://s3:8333", path_style=True),
        labels={"env": "prod"},
        track="production",
        timeout_minutes=30,
    )
    run = request.run_request(rejudge_from="/b/v", evalset="/b/v/cases.evalset.json")
    assert (run.config, run.judge_model, run.publish_to) == (
        "c.json",
        "openai/gpt-4o-mini",
        "s3://r/x",
    )
    assert run.s3 == request.s3 and run.labels == {"env": "prod"} and run.track == "production"
    assert run.timeout_minutes == 30 and run.rejudge_from == "/b/v" and run.agent is None


def test_the_docs_table_lists_every_setting_with_its_flag() -> None:
    doc = (ROOT / "docs" / "traces.md").read_text()
    table = doc.split("## Settings", 1)[1]
    rows = dict(re.findall(r"^\| `([a-z_0-9]+)` \| ([^|]+) \|", table, re.MULTILINE))
    assert list(rows) == list(TracesRequest.model_fields)
    for name, flags in rows.items():
        flag = flag_of(TracesRequest, name)
        if flag is not None:
            written = set(re.findall(r"`(--[a-z-]+)`", flags))
            assert written <= set(flag.names(name)), name
            assert written, name
