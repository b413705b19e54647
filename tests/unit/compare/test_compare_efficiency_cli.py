"""``agentflow-eval compare`` shows efficiency and divergence, and gates on efficiency
only beyond a ``--max-*-increase`` tolerance (in this process)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.efficiency_sim import simulated_figures
from support.run_counts import Counts, run_with_counts

from agentflow_eval.cli import main
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.models.results import PairedWith

SLOW = "c3"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Six cases of 20 trials; the candidate doubles one case's latency and, in another,
    calls refund instead of lookup_order second in 12 of 20 trials (and fails them); a
    third run only doubles the latency."""
    rng = np.random.default_rng(42)
    root = tmp_path_factory.mktemp("efficiency")
    refund = ("search_orders", "refund")
    baseline = run_with_counts(
        [Counts(f"c{i}", 20, 20, figures=simulated_figures(rng, 20)) for i in range(6)],
        run_id="base",
    )
    cases, slow_only = [], []
    for i in range(6):
        figures = simulated_figures(rng, 20, latency=2.0 if f"c{i}" == SLOW else 1.0)
        slow_only.append(Counts(f"c{i}", 20, 20, figures=figures))
        passed = 20
        if i == 5:
            figures = [*simulated_figures(rng, 12, tool_path=refund), *figures[12:]]
            passed = 8
        cases.append(Counts(f"c{i}", passed, 20, figures=figures))
    # made side by side with the baseline: latency is measured pair by pair
    together = PairedWith(run_id="base", side="candidate")
    candidate = run_with_counts(cases, run_id="cand", day=1)
    candidate = candidate.model_copy(update={"paired_with": together})
    slower = run_with_counts(slow_only, run_id="slow", day=1)
    slower = slower.model_copy(update={"paired_with": together})
    return (
        write_results_json(baseline, root / "base" / "results.json"),
        write_results_json(candidate, root / "cand" / "results.json"),
        write_results_json(slower, root / "slow" / "results.json"),
    )


def test_efficiency_and_divergence_are_shown(
    runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate, _ = runs
    assert main(["compare", str(baseline), str(candidate)]) == 0
    out = capsys.readouterr().out
    assert "Wilcoxon signed-rank" in out
    slow = next(line for line in out.splitlines() if line.strip().startswith(f"{SLOW}: latency"))
    assert "p (Holm)" in slow and slow.endswith(": slower")
    assert "Efficiency overall (geometric mean of per-case median ratios" in out
    assert "c5 (regression): tools: step 2: refund 0/20 → 12/20, lookup_order 20/20 → 8/20" in out


def test_efficiency_gates_only_beyond_the_tolerance(
    runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, _, slower = runs
    args = ["compare", str(baseline), str(slower), "--fail-on-regression"]
    assert main([*args, "--json"]) == 0  # slower, reported: no tolerance was given
    document = json.loads(capsys.readouterr().out)
    assert document["comparison_version"] == "1.4" and document["pairing"] == "paired"
    latency = next(
        m for m in document["cases"][3]["efficiency"]["measures"] if m["measure"] == "latency"
    )
    assert latency["verdict"] == "slower" and latency["test"] == "wilcoxon-signed-rank"
    assert latency["beyond_tolerance"] is False and 1.5 < latency["ratio"] < 3
    assert main([*args, "--max-latency-increase", "300%"]) == 0  # within the tolerance
    assert main([*args, "--max-token-increase", "1%"]) == 0  # another measure's
    capsys.readouterr()
    assert main([*args, "--max-latency-increase", "30%", "--json"]) == 1
    gated = json.loads(capsys.readouterr().out)
    assert gated["efficiency"]["regressed"] is True and gated["regressed"] is True
    assert gated["efficiency"]["tolerances"]["max_latency_increase"] == 0.3
    assert main(["compare", str(baseline), str(slower), "--max-latency-increase", "30%"]) == 0


def test_a_bad_tolerance_is_one_line_and_exit_2(
    runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate, _ = runs
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(baseline), str(candidate), "--max-cost-increase", "10"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--max-cost-increase" in err
    assert "write a percentage with its %" in err
