"""The run request's fields as flags: derived from the fields, checked as the fields check
them, documented in docs/run-settings.md (which must be current)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agentflow_eval.cli.request_flags import (
    add_request_flags,
    request_from_flags,
    settings_table,
)
from agentflow_eval.models.request import RunRequest

ROOT = Path(__file__).resolve().parents[3]


def parser(*fields: str) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser()
    add_request_flags(made, fields)
    return made


def test_the_settings_page_is_the_requests() -> None:
    page = (ROOT / "docs/run-settings.md").read_text(encoding="utf-8")
    assert page.endswith(settings_table()), "docs/run-settings.md is stale: regenerate it"


def test_flags_not_given_leave_the_request_its_defaults() -> None:
    args = parser("runs", "labels", "s3", "fail_on_regression").parse_args([])
    assert request_from_flags(args, evalset="e.json") == RunRequest(evalset="e.json")


def test_flags_make_the_fields_values() -> None:
    args = parser("runs", "labels", "s3", "min_pass_rate", "max_cost_increase").parse_args(
        ["--runs", "3", "--label", "env=ci", "--label", "team=a", "--s3-links", "endpoint",
         "--fail-under", "80%", "--max-cost-increase", "10%"]
    )  # fmt: skip
    request = request_from_flags(args, evalset="e.json")
    assert request.runs == 3 and request.labels == {"env": "ci", "team": "a"}
    assert request.s3.report_links == "endpoint" and request.min_pass_rate == 0.8
    assert request.max_cost_increase == pytest.approx(0.1)


def test_flags_given_now_go_over_the_earlier_request() -> None:
    earlier = RunRequest(evalset="e.json", runs=4, s3={"region": "eu-west-1"}, track="nightly")
    args = parser("runs", "s3", "track").parse_args(["--s3-path-style"])
    request = request_from_flags(args, earlier=earlier)
    assert (request.runs, request.track) == (4, "nightly")
    assert request.s3.region == "eu-west-1" and request.s3.path_style


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--runs", "0"], "argument --runs: must be at least 1, got 0"),
        (["--runs", "x"], "argument --runs: expected a whole number, got 'x'"),
        (["--max-cost-increase", "10"], "is ambiguous: write a percentage with its %"),
        (["--s3-link-expiry-hours", "500"], "less than or equal to 168"),
    ],
)
def test_a_flag_is_refused_in_the_fields_words(
    flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parser("runs", "max_cost_increase", "s3").parse_args(flags)
    assert said in capsys.readouterr().err


def test_a_public_url_asks_for_public_links_unless_links_are_named() -> None:
    assert RunRequest(s3={"public_url": "https://r"}).s3.report_links == "public"
    chosen = RunRequest(s3={"public_url": "https://r", "report_links": "endpoint"})
    assert chosen.s3.report_links == "endpoint"
