"""The published history of an eval set shows a slow slide: its index.html charts the
pass rate over runs with intervals, and each case's recent trend (a sparkline of its
last runs and the pooled pass rate of their older and newer halves), with each run's
comparison with its baseline."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from support.run_counts import Counts, run_with_counts
from support.sample_results import write_run_dir

from agentflow_eval.compare.baseline import compare_with_baseline, write_run_comparison
from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.report.trends import case_trends
from agentflow_eval.storage.history import CASE_HISTORY_RUNS, RunsManifest, run_entry

SLIDE = [5, 5, 4, 4, 3, 3]  # never a significant night-to-night change at 5 runs


def _publish_nights(tmp_path: Path, target: Path) -> None:
    for day, passed in enumerate(SLIDE):
        run = run_with_counts(
            [Counts("steady", 5, 5), Counts("sliding", passed, 5)], run_id=f"night{day}", day=day
        )
        folder = write_run_dir(tmp_path / "runs" / run_folder(run), run)
        if day:
            write_run_comparison(
                folder, compare_with_baseline(run, "latest", publish_to=str(target))
            )
        assert publish_run(folder, target).published


def test_a_slow_slide_shows_per_case_though_no_night_was_significant(tmp_path: Path) -> None:
    target = tmp_path / "published"
    _publish_nights(tmp_path, target)
    folder = target / "travel_agent_nightly"
    manifest = RunsManifest.model_validate_json((folder / "runs.json").read_text())
    assert [entry.comparison.verdict for entry in manifest.runs[:-1]] == [  # type: ignore[union-attr]
        "no significant change"
    ] * 5
    assert manifest.runs[0].case_counts == {"steady": (5, 5), "sliding": (3, 5)}

    sliding, steady = case_trends(manifest.runs)
    assert (sliding.case_id, steady.case_id) == ("sliding", "steady")  # worst slide first
    assert (sliding.older, sliding.newer) == ("93%", "67%")  # 14/15, then 10/15
    assert sliding.change is not None and round(sliding.change, 4) == round(10 / 15 - 14 / 15, 4)
    assert sliding.change_text == "−27 pts" and sliding.latest == "3/5"
    assert [p.state for p in sliding.points] == ["passing"] * 2 + ["flaky"] * 4
    assert sliding.points[0].y < sliding.points[-1].y  # drawn lower as it slides
    assert steady.change == 0.0

    page = (folder / "index.html").read_text()
    text = html.unescape(page)
    assert "Cases over the last runs" in page and "over the last 6 runs" in page
    assert "night0: 5/5; " in text and "night5: 3/5" in text  # the counts, on hover
    assert page.count('<svg class="spark"') == 2
    assert re.search(r'<td class="num slide" data-label="Change">−27 pts</td>', page)
    assert "Pass rate over runs" in page and '<polygon class="band"' in page  # intervals
    assert page.count("no significant change") == 5  # each run against its baseline
    assert "style=" not in page


def test_the_manifest_keeps_case_counts_for_the_newest_runs_only() -> None:
    manifest = RunsManifest(eval_set_id="travel_agent_nightly")
    for day in range(CASE_HISTORY_RUNS + 3):
        run = run_with_counts([Counts("a", 1, 1)], run_id=f"night{day}", day=day)
        manifest = manifest.with_run(run_entry(run, run_folder(run), []))
    kept = [bool(entry.case_counts) for entry in manifest.runs]
    assert kept == [True] * CASE_HISTORY_RUNS + [False] * 3
    assert len(case_trends(manifest.runs)[0].points) == CASE_HISTORY_RUNS
    # an entry written before per-case counts existed still reads
    old = json.loads(manifest.runs[-1].model_dump_json())
    for key in ("case_counts", "complete", "gate_failed", "comparison", "labels"):
        old.pop(key)
    assert RunsManifest.model_validate({"eval_set_id": "x", "runs": [old]}).runs[0].completed
