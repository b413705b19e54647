"""The console scorecard: one line per case, and with ``verbose`` why each failing trial
failed, read case by case from memory or from a run folder's judged.jsonl."""

from __future__ import annotations

from pathlib import Path

from support.judged_file import write_judged_file
from support.sample_results import sample_run

from agentflow_eval.report.case_trials import JudgedFileTrials
from agentflow_eval.report.scorecard import format_scorecard


def test_verbose_names_every_failing_trial_under_its_case() -> None:
    run, _ = sample_run(trials=4)
    lines = format_scorecard(run, verbose=True).splitlines()
    assert any(t.passed for t in run.trials) and any(not t.passed for t in run.trials)
    for case in run.cases:
        [start] = [i for i, line in enumerate(lines) if line.startswith(f"  {case.case_id} ")]
        assert f"{case.passed}/{case.runs}" in lines[start]
        details = []
        for line in lines[start + 1 :]:
            if not line.startswith("      "):
                break
            details.append(line.strip())
        listed = [d.split(":", 1)[0] for d in details if d.startswith("trial ")]
        failing = [t for t in run.trials if t.trial.case_id == case.case_id and not t.passed]
        assert listed == [f"trial {t.trial.trial_index}" for t in failing]
        for result in failing:
            assert f"trial {result.trial.trial_index}: {result.status}: " in "\n".join(details)


def test_verbose_reads_the_same_lines_from_a_run_folder(tmp_path: Path) -> None:
    judged = write_judged_file(tmp_path / "run", trials=3)
    run, _ = sample_run(trials=3)
    index = JudgedFileTrials.scan(judged.paths.judged)
    # the first line of each trial counts (the file repeats one trial with another verdict)
    assert sum(len(index.trials_of(case.case_id)) for case in run.cases) == len(judged.counted)
    from_file = format_scorecard(run.model_copy(update={"trials": []}), verbose=True, trials=index)
    assert from_file == format_scorecard(run, verbose=True)
    assert "A SECOND LINE FOR AN EXISTING TRIAL" not in from_file


def test_the_plain_scorecard_needs_no_trials() -> None:
    run, _ = sample_run(trials=2)
    text = format_scorecard(run.model_copy(update={"trials": []}))
    assert f"overall: {run.totals.passed}/{run.totals.trials}" in text
    assert "trial 0:" not in text
