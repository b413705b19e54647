"""``agentflow-eval run`` on part of an eval set (--case, --limit), through the evaluate
flow: only the chosen cases run, the results say it was a subset, and a resume keeps the
same subset."""

from __future__ import annotations

import json
from pathlib import Path

from agentflow_eval.cli import main

ROOT = Path(__file__).resolve().parents[2]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")


def test_a_subset_runs_only_its_cases_and_says_so(tmp_path: Path, capsys) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(message):\n    return 'no idea'\n")
    out = tmp_path / "out"
    code = main(
        ["run", f"{agent}:agent", EVALSET, "--case", "*multi*", "--case", "*simple",
         "--limit", "1", "--runs", "2", "--output", str(out), "--json"]
    )  # fmt: skip
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert [case["case_id"] for case in summary["cases"]] == ["weather_lookup_simple"]
    assert summary["totals"]["trials"] == 2
    assert "subset: 1 of 2 cases (case '*multi*', case '*simple', limit 1)" in summary["notes"]
    run_dir = Path(summary["run_dir"])
    assert json.loads((run_dir / "run.json").read_text())["params"]["limit"] == 1
    results = json.loads((run_dir / "results.json").read_text())
    assert [case["case_id"] for case in results["cases"]] == ["weather_lookup_simple"]

    (run_dir / "results.json").unlink()  # as if the run stopped before its report
    assert main(["run", "--resume", str(run_dir), "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("overall: 0/2  ")  # the same subset
