"""One trial numbering for people: a failing trial followed from the CLI's scorecard
through report.html and junit.xml carries the same number everywhere (counting from 1),
while results.json keeps its 0-based ``trial_index``; ``--open`` opens that report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.report_page import case_details

from agentflow_eval.cli import main

REFERENCE = "It is sunny in Lisbon today."


def _project(tmp_path: Path) -> tuple[str, str, str]:
    """An agent that answers the reference every time but its second, and an eval set
    and config that judge the answer only."""
    agent = tmp_path / "second_call_wrong.py"
    agent.write_text(
        "calls = 0\n\n\n"
        "def agent(message):\n"
        "    global calls\n"
        "    calls += 1\n"
        f"    return 'no idea' if calls == 2 else {REFERENCE!r}\n",
        encoding="utf-8",
    )
    evalset = tmp_path / "sunny.evalset.json"
    evalset.write_text(
        json.dumps(
            {
                "eval_set_id": "sunny",
                "eval_cases": [
                    {
                        "eval_id": "lisbon_weather",
                        "conversation": [
                            {
                                "user_content": "Weather in Lisbon?",
                                "final_response": REFERENCE,
                            }
                        ],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    config = tmp_path / "eval_config.json"
    config.write_text(
        json.dumps({"criteria": {"response_match_score": {"threshold": 0.8}}}), encoding="utf-8"
    )
    return f"{agent}:agent", str(evalset), str(config)


def test_one_failing_trial_has_the_same_number_in_cli_report_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    agent, evalset, config = _project(tmp_path)
    out = tmp_path / "out"
    args = ["run", agent, evalset, "--config", config, "--runs", "3", "--open"]
    assert main([*args, "--max-concurrency", "1", "--output", str(out), "--verbose"]) == 0
    printed = capsys.readouterr().out
    (run_dir,) = out.glob("*/*")
    assert opened == [(run_dir / "report.html").resolve().as_uri()]  # run --open

    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    (failed,) = [t for t in results["trials"] if t["status"] == "failed"]
    number = failed["trial"]["trial_index"] + 1  # results.json keeps counting from 0

    failing_lines = re.findall(r"^ +trials? ([\d, ]+): failed: ", printed, re.MULTILINE)
    assert failing_lines == [str(number)], printed

    junit = (run_dir / "junit.xml").read_text(encoding="utf-8")
    assert set(re.findall(r"trial (\d+): failed", junit)) == {str(number)}  # failure, stdout

    page = (run_dir / "report.html").read_text(encoding="utf-8")
    trials = case_details(page, "lisbon_weather")["trials"]
    assert [t["number"] for t in trials if t["status"] == "failed"] == [number]
