"""Every output format shows the control characters of ids and text as escapes, as the
terminal text does (``printable``): ``compare --format markdown`` (printed to the terminal,
posted as a pull-request comment), the Prefect markdown and table artifacts, junit.xml
(read by CI tools and printed to their logs) and the scorecard. An id from a forged or
damaged results.json can neither run escape sequences nor reorder what is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.cli import main
from agentflow_eval.compare.comparison import compare_runs
from agentflow_eval.compare.models import RunComparison
from agentflow_eval.models.results import RunResult
from agentflow_eval.report.junit import junit_xml
from agentflow_eval.report.markdown import comparison_rows, summary_markdown
from agentflow_eval.report.pull_request import comparison_comment, not_compared_comment
from agentflow_eval.report.scorecard import format_scorecard

CASE = "weather_multi_city"
EVIL_CASE = "weather\x1b[2J\x1b]8;;http://x\x07\x9b31m\u202efake"
EVIL_AGENT = "agent\x1b[31mred"
EVIL_SET = "set\x1b[1m--\x00"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What must never reach an output: C0 and C1 controls (ESC, BEL, NUL, the one-byte CSI)
and bidirectional overrides. Newline and tab may."""


def _evil_run() -> RunResult:
    """The sample run with control characters in a case id (every trial of it too), the
    agent, the eval set id and a failing trial's error."""
    run, _ = sample_run(trials=3)
    text = run.model_dump_json()
    text = text.replace(f'"{CASE}"', json.dumps(EVIL_CASE))
    document: dict[str, Any] = json.loads(text)
    document["agent"] = EVIL_AGENT
    document["eval_set_id"] = EVIL_SET
    errored = next(t["trial"] for t in document["trials"] if t["trial"]["error"])
    errored["error"]["message"] = "boom\x1b[2Jgone\x9b"
    return RunResult.model_validate(document)


def _clean(output: str) -> None:
    found = sorted({repr(c) for c in RAW.findall(output)})
    assert not found, f"raw control characters in the output: {found}"


def test_compare_markdown_shows_escapes_not_escape_sequences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _evil_run()
    run_dir = write_run_dir(tmp_path / "evil", run.model_copy(update={"trials": []}))
    assert main(["compare", str(run_dir), str(run_dir), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    _clean(out)
    assert "weather\\\\x1b\\[2J" in out and "agent\\x1b[31mred" in out  # shown, escaped
    assert out.startswith("<!-- agentflow-eval:compare set\\x1b[1m-\\x00 -->\n")


def test_the_markdown_artifacts_and_comments_show_escapes() -> None:
    run = _evil_run()
    comparison = compare_runs(run, run)
    _clean(comparison_comment(comparison))
    _clean(not_compared_comment(EVIL_SET, "latest\x1b[2J", "why\x07"))
    _clean(summary_markdown(run))
    record = RunComparison(baseline="latest", comparison=comparison)
    _clean(json.dumps(comparison_rows(record), ensure_ascii=False))


def test_junit_shows_escapes_in_names_and_messages() -> None:
    xml = junit_xml(_evil_run())
    _clean(xml)
    assert "weather\\x1b[2J" in xml and "boom\\x1b[2Jgone\\x9b" in xml


def test_the_scorecard_shows_escapes() -> None:
    card = format_scorecard(_evil_run(), verbose=True, full=True)
    _clean(card)
    assert "weather\\x1b[2J" in card
