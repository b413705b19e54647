"""``agentflow-eval compare`` end to end on two run folders, in this process (as an
installed command in a process of its own: tests/e2e/test_commands.py)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.cli import main
from agentflow_eval.compare import compare_runs, console_for, print_comparison
from agentflow_eval.compare.sides import load_side
from agentflow_eval.publish.publisher import run_folder

REGRESSED = "weather_lookup_simple"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline and a candidate run folder; the candidate's agent calls the wrong tool
    in one case that always passed."""
    root = tmp_path_factory.mktemp("runs")
    baseline, _eval_set = sample_run(trials=10, run_id="base")
    candidate, _ = sample_run(trials=10, run_id="cand", behaviour_of={REGRESSED: "wrong_tool"})
    return (
        write_run_dir(root / run_folder(baseline), baseline),
        write_run_dir(root / "candidate", candidate),
    )


def test_table_overall_criteria_and_power(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate = runs
    assert main(["compare", str(baseline), str(candidate)]) == 0  # report-only
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # not a terminal: plain text
    row = next(line for line in out.splitlines() if line.strip().startswith(REGRESSED))
    cells = [cell.strip() for cell in row.split("|")]
    assert cells[:6] == [REGRESSED, "10/10", "0/10", "-100.0 pts", "<0.001", "regression"]
    assert f"{REGRESSED} (regression): tool_trajectory_avg_score 1.00 -> 0.00" in out
    flaky = next(line for line in out.splitlines() if line.strip().startswith("weather_multi"))
    assert "no significant change" in flaky
    assert "Overall (6 case(s) paired): mean pass rate" in out
    assert "1 case(s) regressed" in out
    assert "criteria: mean score over trials" in out
    power = next(line for line in out.splitlines() if line.startswith("Power"))
    assert power.startswith("Power (80%, Holm over 6 cases: one-sided level 0.0042) with 10 runs")
    assert "a case that always passed, once it drops by" in power
    assert re.search(r"A 20-pt drop from 48\.3% needs \d+ runs per side", power)


def test_fail_on_regression(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    baseline, candidate = runs
    assert main(["compare", str(baseline), str(candidate), "--fail-on-regression"]) == 1
    assert main(["compare", str(baseline), str(baseline), "--fail-on-regression"]) == 0
    capsys.readouterr()


def test_json(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    baseline, candidate = runs
    assert main(["compare", str(baseline), str(candidate), "--json", "--detect-drop", "0.3"]) == 0
    document = json.loads(capsys.readouterr().out)
    verdicts = {case["case_id"]: case["verdict"] for case in document["cases"]}
    assert verdicts[REGRESSED] == "regression"
    assert sum(verdict == "regression" for verdict in verdicts.values()) == 1
    assert document["overall"]["verdict"] in ("regression", "no significant change")
    assert document["baseline"]["run_id"] == "base"
    assert document["candidate"]["source"] == str(candidate / "results.json")
    assert document["power"]["detect_drop"] == 0.3


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("agentflow-eval: error: "), err
    return err


def test_bad_input_is_one_line_and_exit_2(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, _ = runs
    assert main(["compare", str(baseline), str(tmp_path / "missing")]) == 2
    assert "missing: no such file" in _one_line_error(capsys)

    other_run, _ = sample_run(run_id="other")
    other = other_run.model_copy(update={"eval_set_id": "hotel_agent"})
    write_run_dir(tmp_path / "other", other)
    assert main(["compare", str(baseline), str(tmp_path / "other")]) == 2
    assert "different eval sets" in _one_line_error(capsys)
    assert (
        main(["compare", str(baseline), str(tmp_path / "other"), "--allow-different-eval-sets"])
        == 0
    )
    capsys.readouterr()

    assert main(["compare", str(baseline), str(baseline), "--alpha", "2"]) == 2
    assert "--alpha must be between 0 and 1" in _one_line_error(capsys)
    assert main(["compare", "latest", "latest"]) == 2
    assert "only one side" in _one_line_error(capsys)
    assert main(["compare", "latest", str(baseline)]) == 2
    assert "needs the publish target" in _one_line_error(capsys)


def test_latest_from_a_publish_folder(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentflow_eval.publish.publisher import publish_run

    baseline, candidate = runs
    assert publish_run(baseline, tmp_path / "site").published
    code = main(["compare", "latest", str(candidate), "--publish-to", str(tmp_path / "site")])
    assert code == 0
    out = capsys.readouterr().out
    assert f"baseline  base  2026-11-20 02:30 UTC  {tmp_path / 'site'}" in out


class _Terminal(io.StringIO):
    """A terminal 80 columns wide (rich's default when it cannot ask)."""

    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_unless_no_color(
    runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = runs
    comparison = compare_runs(load_side(baseline).run, load_side(candidate).run)
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = _Terminal()
    print_comparison(comparison, console_for(coloured))
    assert "\x1b[1;31mregression" in coloured.getvalue()  # in bold red, never cut short
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    print_comparison(comparison, console_for(plain))
    assert "31m" not in plain.getvalue() and "regression" in plain.getvalue()


def test_ids_from_results_files_cannot_forge_lines_or_escape_sequences(
    runs: tuple[Path, Path],
) -> None:
    baseline, candidate = runs
    comparison = compare_runs(load_side(baseline).run, load_side(candidate).run)
    forged = "x\noverall: +100.0 pts\x1b]0;pwned\x07"
    for case in comparison.cases:
        case.case_id = forged
        case.note = case.note or "changed"
    out = io.StringIO()
    print_comparison(comparison, console_for(out))
    text = out.getvalue()
    assert "\x1b]0;pwned" not in text and "\x07" not in text
    assert not any(line.startswith("overall: +100.0 pts") for line in text.splitlines())
    assert "x\\noverall: +100.0 pts" in text


def test_markdown_for_a_pull_request_comment(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate = runs
    assert main(["compare", str(baseline), str(candidate), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("<!-- agentflow-eval:compare ") and lines[0].endswith(" -->")
    assert lines[1].startswith("### ▼ ") and lines[1].endswith(": regression")
    assert "**Regressed** (1)" in out
    row = next(line for line in lines if line.startswith(f"| {REGRESSED} |"))  # as it is
    assert row.split(" | ")[1:5] == ["10/10 (100%)", "0/10 (0%)", "-100 pts", "<0.001"]
    assert "<details><summary>No significant change (5 cases)</summary>" in out
    assert "- **Baseline**: run `base`" in out and "- **Candidate**: run `cand`" in out
    assert "Boschloo's exact test per case, Holm-corrected" in out
    assert any(line.startswith("Power (80%") for line in lines)  # nothing to escape there
    assert main(["compare", str(baseline), str(candidate), "--format", "markdown", "--json"]) == 2
    assert "--json and --format markdown disagree" in capsys.readouterr().err
