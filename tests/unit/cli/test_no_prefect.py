"""``agentflow-eval run --no-prefect`` (or ``AGENTFLOW_EVAL_NO_PREFECT=1``): the same stage
list in the test's process, without Prefect — the core tier's guard fails any test here
that imports it. The same outputs as the flow path: the run folder and its reports, the
scorecard, exit codes and the regression gate, publishing, resume, the judge cache.

That the two paths write the same results.json, and that a fresh process never imports
Prefect on this path: tests/flows/test_cli_no_prefect.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.cli.direct import local_result_storage
from agentflow_eval.cli.early import NO_PREFECT_ENV, wants_no_prefect
from agentflow_eval.errors import InputError
from agentflow_eval.models.request import RunRequest, S3Options
from agentflow_eval.pipeline.execute import Runtime
from tests.support.cli_in_process import CliResult, run_cli

ROOT = Path(__file__).resolve().parents[3]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
CONFIG = str(ROOT / "examples/weather/eval_config.json")
AGENT = "examples.weather.agent:agent"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """``cli(*args) -> CliResult`` from the repository's folder, judge replies cached in a
    folder of the test's own."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv(NO_PREFECT_ENV, raising=False)
    monkeypatch.setenv("PREFECT_RESULTS_LOCAL_STORAGE_PATH", str(tmp_path / "storage"))

    def run(*args: str) -> CliResult:
        return run_cli(capsys, *args)

    return run


def _run_dir(stdout: str) -> Path:
    for line in stdout.splitlines():
        if line.startswith("results in "):
            return ROOT / line.removeprefix("results in ").split("  ")[0]
    raise AssertionError(f"no run folder in:\n{stdout}")


def test_a_run_without_prefect_writes_the_run_folder_and_the_scorecard(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli(
        "run", AGENT, EVALSET, "--config", CONFIG, "--runs", "2", "--output", str(out),
        "--no-prefect",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "agentflow-eval: weather_agent_basic_tests · 2 runs each" in result.stdout
    assert "overall: " in result.stdout
    run_dir = _run_dir(result.stdout)
    assert run_dir.parent.parent == out
    for name in ("results.json", "report.html", "junit.xml", "run.json"):
        assert (run_dir / name).is_file(), name
    results = json.loads((run_dir / "results.json").read_text())
    assert len(results["trials"]) == 4
    # the LLM judge answered, and its replies are in the local cache the flow shares
    cached = list((tmp_path / "storage" / "agentflow-judge-cache").glob("*.json"))
    assert cached
    assert "judged 4/4" in result.stderr  # the progress display followed the folder

    again = cli(
        "run", AGENT, EVALSET, "--config", CONFIG, "--runs", "2", "--output", str(out),
        "--no-prefect", "--verbose",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "0 judge calls, 12 more answered from cache" in again.stdout  # never paid twice


def test_the_environment_setting_and_the_gates(
    cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(NO_PREFECT_ENV, "1")
    out = str(tmp_path / "out")
    common = ["run", AGENT, EVALSET, "--runs", "2", "--output", out]
    below = cli(*common, "--fail-under", "100%")
    assert below.returncode == 1
    assert "is below min_pass_rate 100%" in below.stderr
    missing = str(tmp_path / "no-such-run")
    gate = cli(*common, "--quiet", "--baseline", missing, "--fail-on-regression")
    assert gate.returncode == 1, gate.stderr
    assert "--fail-on-regression: the baseline could not be read" in gate.stderr
    compared = cli(*common, "--json", "--baseline", str(_latest(tmp_path / "out")))
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["comparison"] is not None


def _latest(out: Path) -> Path:
    return max(out.glob("*/*"), key=lambda path: path.name)


def test_publish_and_resume_without_prefect(cli, tmp_path: Path) -> None:
    published = tmp_path / "published"
    first = cli(
        "run", AGENT, EVALSET, "--runs", "1", "--output", str(tmp_path / "out"),
        "--publish-to", str(published), "--no-prefect",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    run_dir = _run_dir(first.stdout)
    assert (published / "weather_agent_basic_tests" / run_dir.name / "report.html").is_file()
    assert (published / "weather_agent_basic_tests" / "index.html").is_file()

    # a run stopped after its trials: the resume judges them and writes the reports
    for name in ("judged.jsonl", "results.json", "report.html", "junit.xml"):
        (run_dir / name).unlink()
    trials = (run_dir / "trials.jsonl").read_bytes()
    resumed = cli("run", "--resume", str(run_dir), "--no-prefect", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert (run_dir / "trials.jsonl").read_bytes() == trials  # no trial ran again
    assert len((run_dir / "judged.jsonl").read_text().splitlines()) == 2
    assert (run_dir / "results.json").is_file() and (run_dir / "report.html").is_file()


def test_a_resumed_run_that_needs_prefect_is_refused_in_one_line(cli, tmp_path: Path) -> None:
    first = cli(
        "run", AGENT, EVALSET, "--runs", "1", "--output", str(tmp_path / "out"), "--no-prefect"
    )
    run_dir = _run_dir(first.stdout)
    record = json.loads((run_dir / "run.json").read_text())
    record["params"]["secrets"] = {"OPENAI_API_KEY": "openai-key"}
    (run_dir / "run.json").write_text(json.dumps(record))
    before = sorted(path.name for path in run_dir.iterdir())
    refused = cli("run", "--resume", str(run_dir), "--no-prefect")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "agentflow-eval: error: --no-prefect: this run uses secrets (provider keys from "
        "Prefect Secret blocks), which only the Prefect flow reads; run it without "
        f"--no-prefect (and without {NO_PREFECT_ENV})"
    ]
    assert sorted(path.name for path in run_dir.iterdir()) == before


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        (True, None, True),
        (False, "1", True),
        (False, "yes", True),
        (False, " TRUE ", True),
        (False, "0", False),
        (False, "", False),
        (False, None, False),
    ],
)
def test_the_flag_or_the_environment_chooses_the_path(
    flag: bool, value: str | None, expected: bool
) -> None:
    environ = {} if value is None else {NO_PREFECT_ENV: value}
    assert wants_no_prefect(flag, environ) is expected


def test_parameters_only_the_flow_reads_are_refused() -> None:
    base = {"agent": AGENT, "evalset": EVALSET}
    Runtime().check(RunRequest(**base))
    for extra, named in [
        ({"shards": 2}, "shards=2"),
        ({"shared_storage": "s3-bucket/x"}, "shared_storage"),
        ({"s3": S3Options(credentials_secret="s3-creds")}, "s3.credentials_secret"),
    ]:
        with pytest.raises(InputError, match=named):
            Runtime().check(RunRequest(**base, **extra))


def test_the_judge_cache_is_where_prefect_keeps_local_results(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert local_result_storage({"PREFECT_HOME": str(home)}) == home / "storage"
    assert local_result_storage({}) == Path.home() / ".prefect" / "storage"
    named = {"PREFECT_HOME": str(home), "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(tmp_path)}
    assert local_result_storage(named) == tmp_path


def test_track_points_a_run_at_another_history(cli, tmp_path: Path) -> None:
    published = str(tmp_path / "published")
    common = ["run", AGENT, EVALSET, "--runs", "1", "--output", str(tmp_path / "out")]
    common += ["--publish-to", published, "--no-prefect", "--json"]

    def run(*flags: str) -> tuple[str, str, Any]:
        """The run's id, its track (as results.json records it) and its comparison."""
        ran = cli(*common, *flags)
        assert ran.returncode == 0, ran.stderr
        summary = json.loads(ran.stdout)
        results = json.loads(Path(summary["results"]).read_text())
        return results["run_id"], results["track"], summary["comparison"]

    nightly, track, _ = run("--track", "nightly")
    assert track == "nightly"
    # an ad-hoc run's latest baseline is the last ad-hoc run: the nightly's is not its
    _, track, record = run("--baseline", "latest")
    assert track == "adhoc" and record["comparison"] is None
    assert "in history 'nightly'" in record["problem"]["message"]
    # named on purpose, the nightly's history is the baseline
    _, track, record = run("--baseline", "latest", "--track", "nightly")
    assert track == "nightly" and record["comparison"]["baseline"]["run_id"] == nightly


HELD_AGENT = """
import asyncio
from pathlib import Path

HOLD = Path({hold!r})


async def agent(message):
    while "held" in message and HOLD.exists():  # until the test lets it go
        await asyncio.sleep(0.05)
    return "done"
"""


def test_a_run_past_its_timeout_stops_in_one_line_and_resumes(cli, tmp_path: Path) -> None:
    hold = tmp_path / "hold"
    hold.touch()
    agents = tmp_path / "held_agents.py"
    agents.write_text(HELD_AGENT.format(hold=str(hold)))
    evalset = tmp_path / "held.evalset.json"
    cases = [
        {
            "eval_id": name,
            "conversation": [{"user_content": f"{name} please"}],
            "expectations": [{"final_contains": "done"}],
        }
        for name in ("quick", "held")
    ]
    evalset.write_text(json.dumps({"eval_set_id": "held", "eval_cases": cases}))
    stopped = cli(
        "run", f"{agents}:agent", str(evalset), "--runs", "1", "--output",
        str(tmp_path / "out"), "--timeout-minutes", "0.01", "--no-prefect",
    )  # fmt: skip
    assert stopped.returncode == 3, stopped.stderr
    (line,) = [line for line in stopped.stderr.splitlines() if "--timeout-minutes" in line]
    assert "the run did not finish within 0.01 min (--timeout-minutes)" in line
    run_dir = Path(line.rsplit("--resume ", 1)[1])
    run_dir = run_dir if run_dir.is_absolute() else ROOT / run_dir
    assert not (run_dir / "results.json").exists()  # stopped, not reported as complete
    held = [json.loads(t) for t in (run_dir / "trials.jsonl").read_text().splitlines()]
    assert all(trial["case_id"] != "held" for trial in held)  # nothing charged to the agent

    hold.unlink()
    resumed = cli("run", "--resume", str(run_dir), "--no-prefect", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["totals"]["passed"] == 2, results["totals"]


def test_the_run_timeout_flag_takes_minutes_from_zero(cli) -> None:
    refused = cli("run", AGENT, EVALSET, "--timeout-minutes", "-1", "--no-prefect")
    assert refused.returncode == 2
    assert "--timeout-minutes: must be 0 (no limit) or more minutes, got -1" in refused.stderr


def test_the_efficiency_tolerances_reach_the_comparison_without_prefect(
    cli, tmp_path: Path
) -> None:
    """--max-*-increase on the direct path are the request's, as on the flow's: they are
    recorded in comparison.json and are what --fail-on-regression gates on."""
    out = str(tmp_path / "out")
    first = cli("run", AGENT, EVALSET, "--runs", "2", "--output", out, "--no-prefect", "-q")
    assert first.returncode == 0, first.stderr
    baseline = _run_dir(first.stdout)
    second = cli(
        "run", AGENT, EVALSET, "--runs", "2", "--output", out, "--no-prefect", "-q",
        "--baseline", str(baseline), "--max-cost-increase", "10%",
        "--max-latency-increase", "25%",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    recorded = json.loads((_run_dir(second.stdout) / "comparison.json").read_text())
    tolerances = recorded["comparison"]["efficiency"]["tolerances"]
    assert tolerances["max_cost_increase"] == 0.1
    assert tolerances["max_latency_increase"] == 0.25


def test_min_case_pass_rate_fails_the_command_naming_the_case(cli, tmp_path: Path) -> None:
    result = cli(
        "run", AGENT, EVALSET, "--config", CONFIG, "--runs", "5", "--output",
        str(tmp_path / "out"), "--no-prefect", "-q", "--min-case-pass-rate", "60%",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "case(s) below min_case_pass_rate 60%: weather_lookup_multi_city 40%" in result.stderr
