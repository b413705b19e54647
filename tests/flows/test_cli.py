"""The agentflow-eval command: report-only exit codes, --fail-under, bad input, and the
report / publish / schema subcommands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentflow_eval.cli import main
from tests.support.prefect_db import seeded_home

ROOT = Path(__file__).resolve().parents[2]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
CONFIG = str(ROOT / "examples/weather/eval_config.json")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real command in a new process (bad input must fail before Prefect starts)."""
    return subprocess.run(
        [sys.executable, "-m", "agentflow_eval.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.fixture
def lazy_agent(tmp_path: Path) -> str:
    path = tmp_path / "lazy_agent.py"
    path.write_text("def agent(message):\n    return 'no idea'\n")
    return f"{path}:agent"


def test_a_bad_eval_file_exits_2_naming_file_case_and_field(tmp_path):
    bad = tmp_path / "broken.evalset.json"
    bad.write_text(
        json.dumps(
            {
                "eval_set_id": "x",
                "eval_cases": [
                    {
                        "eval_id": "lookup",
                        "conversation": [
                            {"user_content": "hi", "expected_tool_trajectory": [{"args": {}}]}
                        ],
                    }
                ],
            }
        )
    )
    result = cli("run", "examples.weather.agent:agent", str(bad))
    assert result.returncode == 2
    assert (
        "broken.evalset.json: case 'lookup': conversation[0].expected_tool_trajectory[0].name"
        in result.stderr
    )
    assert "Traceback" not in result.stderr + result.stdout


def test_an_unknown_criterion_exits_2_before_any_trial(tmp_path):
    config = tmp_path / "eval_config.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "bogus": 1}}))
    out = tmp_path / "out"
    result = cli(
        "run",
        "examples.weather.agent:agent",
        EVALSET,
        "--config",
        str(config),
        "--output",
        str(out),
    )
    assert result.returncode == 2
    assert "eval_config.json: criteria.bogus: unknown criterion 'bogus'" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert not out.exists()  # refused before the run folder, let alone a trial


def test_mistyped_names_get_the_near_match_on_one_line(tmp_path):
    config = tmp_path / "eval_config.json"
    config.write_text(json.dumps({"criteria": {"response_match_scor": 0.8}}))
    result = cli("run", "examples.weather.agent:agent", EVALSET, "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.strip().endswith("did you mean 'response_match_score'?")
    assert "criteria.response_match_scor: unknown criterion" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

    agent = tmp_path / "my_agent.py"
    agent.write_text("import json\n\n\ndef agent(message):\n    return json.dumps(message)\n")
    result = cli("run", f"{agent}:agentt", EVALSET)
    assert result.returncode == 2
    assert "has no attribute 'agentt'; did you mean 'agent'?" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_agent_exits_2(tmp_path):
    result = cli("run", "no_such_module:agent", EVALSET)
    assert result.returncode == 2
    assert "no_such_module" in result.stderr and "Traceback" not in result.stderr


def test_report_only_by_default_and_a_gate_with_fail_under(tmp_path, lazy_agent, capsys):
    out = str(tmp_path / "out")
    common = ["run", lazy_agent, EVALSET, "--config", CONFIG, "--runs", "1", "--output", out]
    assert main(common) == 0  # 0/2 passed, still exit 0: a scorecard, not a gate
    printed = capsys.readouterr().out
    assert "overall: 0/2" in printed and "results in" in printed
    assert main([*common, "--fail-under", "0.5"]) == 1
    assert main([*common, "--fail-under", "0%"]) == 0
    capsys.readouterr()
    assert main([*common, "--verbose"]) == 0  # why each trial failed, read from the run folder
    verbose = capsys.readouterr().out
    assert verbose.count("trial 1: failed: ") == 2  # one per case, numbered from 1


def test_report_rerenders_an_earlier_run_and_publish_uploads_it(tmp_path, lazy_agent, capsys):
    out = tmp_path / "out"
    assert main(["run", lazy_agent, EVALSET, "--runs", "1", "--output", str(out)]) == 0
    capsys.readouterr()
    (run_dir,) = out.glob("*/*")
    html = tmp_path / "again.html"
    assert main(["report", str(run_dir / "results.json"), "-o", str(html)]) == 0
    assert "weather_lookup_multi_city" in html.read_text()

    published = tmp_path / "published"
    assert main(["publish", str(run_dir), "--to", str(published)]) == 0
    assert "published to" in capsys.readouterr().out
    assert (published / "weather_agent_basic_tests" / run_dir.name / "report.html").exists()
    assert (published / "weather_agent_basic_tests" / "index.html").exists()


def test_output_naming_a_json_file_writes_the_json_report_there(tmp_path, lazy_agent, capsys):
    """``eval AGENT EVALSET --output results/eval_report.json``: the JSON report in that file,
    the run folder beside it."""
    report = tmp_path / "results" / "eval_report.json"
    assert main(["eval", lazy_agent, EVALSET, "--runs", "1", "--output", str(report)]) == 0
    assert f"JSON report in {report}" in capsys.readouterr().out
    assert report.is_file()
    (run_dir,) = (tmp_path / "results").glob("weather_agent_basic_tests/*")
    assert report.read_bytes() == (run_dir / "results.json").read_bytes()
    written = json.loads(report.read_text())
    assert written["eval_set_id"] == "weather_agent_basic_tests"
    assert written["totals"]["trials"] == 2


def test_schema_writes_both_schemas(tmp_path):
    assert main(["schema", "-o", str(tmp_path)]) == 0
    schema = json.loads((tmp_path / "evalset.schema.json").read_text())
    assert "eval_cases" in json.dumps(schema)
    assert (tmp_path / "config.schema.json").exists()


def test_the_installed_command_exits_with_the_gate_code_and_all_its_output(tmp_path, lazy_agent):
    """The executable ends its process without interpreter teardown: the exit code and
    every printed line must survive that (stdout here is a pipe, so it is buffered)."""
    env = {**os.environ, "PREFECT_HOME": str(seeded_home(tmp_path / "prefect"))}
    env.pop("PREFECT_API_URL", None)  # the default: Prefect's temporary server
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "agentflow-eval"),
            *("run", lazy_agent, EVALSET, "--config", CONFIG, "--runs", "2"),
            *("--output", str(tmp_path / "out"), "--fail-under", "0.5"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    assert "overall: 0/4" in result.stdout
    assert result.stdout.rstrip().endswith("(report.html, results.json, junit.xml)")
    assert "pass rate 0% (0 of 4 trials) is below min_pass_rate 50%" in result.stderr
    (run_dir,) = (tmp_path / "out").glob("*/*")
    assert (run_dir / "results.json").exists() and (run_dir / "report.html").exists()


def test_the_notes_example_by_folder_passes_on_its_expectations_alone(
    tmp_path, capsys, monkeypatch
):
    """An agent named by its folder, an eval set with only expectations and no config:
    every trial passes, and the scorecard says the defaults judged no case."""
    monkeypatch.chdir(ROOT)
    out = str(tmp_path / "out")
    notes = "examples/notes/notes.evalset.json"
    assert main(["run", "examples/notes", notes, "--output", out, "--fail-under", "1"]) == 0
    printed = capsys.readouterr().out
    assert "overall: 15/15" in printed
    assert "  append-note  5/5  calls session_note_append" in printed
    assert "default criteria (no config given): tool_trajectory_avg_score on 0/3 cases" in printed
