"""Paired and adaptive runs end to end: the command as a process, real agent functions
making their model calls to the scripted server (``tests/support/paired_agents.py``),
busy loops on both cores for part of a run.

- an A/A paired run (two agents alike) flags no case and calls no efficiency change
  while a CPU hog runs during half of it: the load falls on both trials of a pair;
- a planted drop in three cases is found within the budget;
- a candidate twice as slow is called slower, pair by pair;
- two A/A runs made apart, one of them on a loaded machine, give no efficiency verdict
  in any direction when compared;
- Ctrl-C, then ``--resume``, of an adaptive run reaches the verdicts of an uninterrupted
  one (the agents draw their outcomes from the case and the trial).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentflow_eval.testing import ScriptedOpenAIServer
from tests.support import paired_agents
from tests.support.cli_subprocess import AGENTFLOW_EVAL, command_in

pytestmark = pytest.mark.e2e

AGENTS = Path(paired_agents.__file__)
LATENCY_S = 0.05


def spec(name: str) -> str:
    return f"{AGENTS}:{name}"


def _spin() -> None:
    while True:
        pass


class CpuHog:
    """Busy loops on every core, started and stopped at will."""

    def __init__(self) -> None:
        self._hogs: list[multiprocessing.Process] = []

    def start(self) -> None:
        self._hogs = [
            multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 2)
        ]
        for hog in self._hogs:
            hog.start()

    def stop(self) -> None:
        for hog in self._hogs:
            hog.kill()
            hog.join()
        self._hogs = []


@pytest.fixture
def hog() -> Iterator[CpuHog]:
    made = CpuHog()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "paired.evalset.json").write_text(json.dumps(paired_agents.evalset()))
    with ScriptedOpenAIServer(handler=paired_agents.handler(LATENCY_S)) as server:
        monkeypatch.setenv("PAIRED_TEST_SERVER", server.url)
        yield tmp_path


def cli(project: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    return command_in(project, "http://127.0.0.1:9/api", timeout_s=900)


def paired(candidate: str, *flags: str) -> list[str]:
    return [
        "run", spec(candidate), "paired.evalset.json", "--against", spec("steady_a"),
        "--runs", "5", "--no-prefect", "--json", *flags,
    ]  # fmt: skip


def comparison_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    summary = json.loads(done.stdout)
    return json.loads((Path(summary["results"]).parent / "comparison.json").read_text())[
        "comparison"
    ]


def efficiency_verdicts(comparison: dict[str, Any]) -> list[str]:
    """Every efficiency verdict the comparison gives, per case and overall."""
    efficiency = comparison["efficiency"]
    found = [o["verdict"] for o in efficiency["overall"]]
    found += [
        measure["verdict"]
        for case in comparison["cases"]
        if case.get("efficiency")
        for measure in case["efficiency"]["measures"]
    ]
    return [verdict for verdict in found if verdict != "no significant change"]


def test_an_aa_paired_run_under_a_cpu_hog_for_half_of_it_calls_nothing(
    project: Path, hog: CpuHog
) -> None:
    args = paired("steady_b", "--until-decided", "--max-trials", "400", "--alpha", "0.01")
    process = subprocess.Popen(
        [AGENTFLOW_EVAL, *args, "--output", str(project / "out")],
        cwd=project,
        env={**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    trials = lambda: sum(  # noqa: E731
        len(path.read_text().splitlines()) for path in project.glob("out/*/*/**/trials.jsonl")
    )
    deadline = time.monotonic() + 600
    while trials() < 200 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    hog.start()  # the second half of the run on a loaded machine
    out, err = process.communicate(timeout=900)
    hog.stop()
    assert process.returncode == 0, err[-3000:]
    comparison = comparison_of(subprocess.CompletedProcess(args, 0, out, err))
    summary = comparison["sequential"]
    assert summary["counts"]["regressed"] == summary["counts"]["improved"] == 0
    assert comparison["pairing"] == "paired" and summary["trials"] <= 400
    assert efficiency_verdicts(comparison) == []
    assert comparison["regressed"] is False


def test_a_planted_drop_in_three_cases_is_found_within_the_budget(project: Path) -> None:
    done = cli(project)(
        *paired("dropped", "--until-decided", "--max-trials", "800", "--fail-on-regression"),
        "--output", str(project / "out"),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]  # it regressed, and fails on it
    summary = comparison_of(done)["sequential"]
    regressed = {case["case_id"] for case in summary["cases"] if case["status"] == "regressed"}
    assert regressed == set(paired_agents.DROPPED)
    assert summary["trials"] <= 800
    assert summary["fixed_design_trials"] > 800  # what the same finds would cost fixed


def test_a_candidate_twice_as_slow_is_called_slower_pair_by_pair(project: Path) -> None:
    done = cli(project)(*paired("slow", "--runs", "8"), "--output", str(project / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    comparison = comparison_of(done)
    latency = next(o for o in comparison["efficiency"]["overall"] if o["measure"] == "latency")
    assert latency["verdict"] == "slower" and 1.4 < latency["ratio"] < 3.0
    assert comparison["efficiency"]["test"] == "wilcoxon-signed-rank"


def test_two_aa_runs_made_apart_on_a_loaded_machine_give_no_efficiency_verdict(
    project: Path, hog: CpuHog
) -> None:
    run = cli(project)
    base = ["run", spec("steady_a"), "paired.evalset.json", "--runs", "10", "--no-prefect"]
    quiet = run(*base, "--json", "--output", str(project / "quiet"))
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    hog.start()
    loaded = run(*base, "--json", "--output", str(project / "loaded"))
    hog.stop()
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    first = Path(json.loads(quiet.stdout)["results"]).parent
    second = Path(json.loads(loaded.stdout)["results"]).parent
    compared = run("compare", str(first), str(second), "--json")
    assert compared.returncode == 0, compared.stderr
    comparison = json.loads(compared.stdout)
    assert comparison["pairing"] == "apart"
    assert efficiency_verdicts(comparison) == []
    assert any("latency is not called" in note for note in comparison["efficiency"]["notes"])
    # the same through --baseline: the run's own comparison says so too
    again = run(*base, "--json", "--baseline", str(first), "--output", str(project / "again"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert efficiency_verdicts(comparison_of(again)) == []


def test_ctrl_c_then_resume_reaches_the_verdicts_of_an_uninterrupted_run(project: Path) -> None:
    adaptive = paired("dropped", "--until-decided", "--max-trials", "600")
    whole = cli(project)(*adaptive, "--output", str(project / "whole"))
    assert whole.returncode == 0, whole.stderr[-3000:]

    process = subprocess.Popen(
        [AGENTFLOW_EVAL, *adaptive, "--output", str(project / "cut")],
        cwd=project,
        env={**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not list(project.glob("cut/*/*/waves.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run ended before its first wave"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err[-3000:]
    (folder,) = project.glob("cut/*/*")
    assert f"--resume {folder}" in err or "--resume" in err
    resumed = cli(project)("run", "--resume", str(folder), "--no-prefect", "--json")
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    def verdicts(done: subprocess.CompletedProcess[str]) -> list[tuple[Any, ...]]:
        summary = comparison_of(done)["sequential"]
        return [(c["case_id"], c["status"], c["pairs"], c["e_value"]) for c in summary["cases"]]

    assert verdicts(resumed) == verdicts(whole)
