"""Every file this project reads is held to the eval sets' limits — size, nesting, the
length of a number — by one mechanism (agentflow_eval/files/limits.py), and a file past
one is refused in one line naming it (and the field, for a number), exit 2 from the CLI:
results.json on compare, report and publish, a run folder's run.json, trials.jsonl and
judged.jsonl, comparison.json, published manifests, eval sets in JSON and YAML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic_core import from_json
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.cli import main
from agentflow_eval.files import jsonl
from agentflow_eval.files.limits import (
    MAX_NESTING_DEPTH,
    MAX_NUMBER_DIGITS,
    UnreadableFile,
    parse_json,
    read_json_file,
    validate_json,
)
from agentflow_eval.models.results import Trial
from agentflow_eval.pipeline.evaluate import evaluate
from tests.support.faults import ANSWER, answer_config, answer_evalset, unfinished_run_dir

ROOT = Path(__file__).resolve().parents[3]
LONG = "9" * 100_000
LONG_SAYS = f"a number 100,000 characters long; a number may have at most {MAX_NUMBER_DIGITS:,}"
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_SAYS = f"nested more than {MAX_NESTING_DEPTH} levels deep"


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err[-3000:]
    assert err.startswith("agentflow-eval: error: ")
    return err.removeprefix("agentflow-eval: error: ").strip()


def _results_with(tmp_path: Path, field: str, raw_value: str) -> Path:
    """A finished run folder whose results.json has ``field`` set to ``raw_value`` (JSON
    text written as is)."""
    run, _ = sample_run(trials=2)
    run_dir = write_run_dir(tmp_path / "forged", run)
    document = json.loads((run_dir / "results.json").read_text())
    document[field] = "PLACEHOLDER"
    text = json.dumps(document, indent=2).replace('"PLACEHOLDER"', raw_value)
    (run_dir / "results.json").write_text(text, encoding="utf-8")
    return run_dir


# ------------------------------------------------------------------------ the mechanism


def test_parse_json_refuses_depth_and_long_numbers_naming_the_field() -> None:
    assert parse_json("[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH, "ok.json")
    for text in ("[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1), DEEP):
        with pytest.raises(UnreadableFile, match=f"^deep.json: {DEEP_SAYS}$"):
            parse_json(text, "deep.json")
    assert parse_json(f'{{"n": {"9" * MAX_NUMBER_DIGITS}}}', "x")["n"] > 0
    for number in (LONG, f"1.{LONG}", f"-{LONG}"):
        with pytest.raises(UnreadableFile) as refused:
            parse_json(f'{{"a": [1, {{"b": {number}}}]}}', "long.json")
        assert str(refused.value).startswith("long.json: field a[1].b: a number ")
        assert refused.value.field == "a[1].b"


def test_a_file_past_its_size_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * 600 + "1]")
    with pytest.raises(UnreadableFile, match=r"big\.json: is 1\.2 KiB, more than the 1\.0 KiB"):
        read_json_file(big, max_bytes=1024, what="a thing")
    assert read_json_file(big)[0] == 1


def test_records_read_into_models_are_held_to_the_same_limits() -> None:
    """A line validated straight into a model is parsed by pydantic-core, not by
    :func:`parse_json`: its limits must be (no looser than) ours."""

    class Anything(BaseModel):
        value: object

    depth = MAX_NESTING_DEPTH + 2  # the object around the value is a level too
    with pytest.raises(ValueError, match="recursion limit"):
        from_json("[" * depth + "]" * depth)
    for line in (f'{{"value": {"[" * depth}{"]" * depth}}}', f'{{"value": {LONG}}}'):
        with pytest.raises(UnreadableFile, match=r"^trials\.jsonl \(line 3\): "):
            validate_json(Anything, line, "trials.jsonl (line 3)")


# ----------------------------------------------------------------- through the commands


def test_compare_refuses_a_deeply_nested_results_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _results_with(tmp_path, "labels", DEEP)
    assert main(["compare", str(run_dir), str(run_dir)]) == 2
    assert _one_line_error(capsys) == f"{run_dir / 'results.json'}: {DEEP_SAYS}"


@pytest.mark.parametrize("command", ["compare", "report", "publish"])
def test_a_long_number_in_results_is_named_by_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    run_dir = _results_with(tmp_path, "agent_version", LONG)
    args = {
        "compare": ["compare", str(run_dir), str(run_dir)],
        "report": ["report", str(run_dir)],
        "publish": ["publish", str(run_dir), "--to", str(tmp_path / "site")],
    }[command]
    assert main(args) == 2
    said = _one_line_error(capsys)
    assert said == f"{run_dir / 'results.json'}: field agent_version: {LONG_SAYS}"
    assert not (tmp_path / "site").exists()


def test_publish_refuses_a_damaged_comparison_before_uploading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, _ = sample_run(trials=2)
    run_dir = write_run_dir(tmp_path / "run", run)
    (run_dir / "comparison.json").write_text(f'{{"baseline": "x", "gate_failed": {LONG}}}')
    assert main(["publish", str(run_dir), "--to", str(tmp_path / "site")]) == 2
    said = _one_line_error(capsys)
    assert said.startswith(f"{run_dir / 'comparison.json'}: field gate_failed: ")
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_an_eval_set_with_a_long_number_names_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """Python refuses to read an integer of more than 4,300 digits, deep in the parser
    and without saying where: the reader names the file and the field."""
    evalset = tmp_path / f"big.evalset{suffix}"
    case = (
        '{"eval_id": "c", "conversation": [{"user_content": "hi", '
        f'"expected_tool_trajectory": [{{"name": "t", "args": {{"n": {LONG}}}}}]}}]}}'
    )
    evalset.write_text(f'{{"eval_set_id": "big", "eval_cases": [{case}]}}')
    field = "eval_cases[0].conversation[0].expected_tool_trajectory[0].args.n"
    assert main(["eval-set", "validate", str(evalset)]) == 2
    assert capsys.readouterr().err.strip() == f"{evalset}: {field}: {LONG_SAYS}"
    assert main(["run", "examples.weather.agent:agent", str(evalset), "--no-prefect"]) == 2
    assert _one_line_error(capsys) == f"{evalset}: {field}: {LONG_SAYS}"


def agent(message: str) -> str:
    return ANSWER


async def _finished_run(tmp_path: Path) -> Path:
    await evaluate(
        PythonAgent(agent), answer_evalset(2), answer_config(), runs=2, output_dir=tmp_path
    )
    [run_dir] = list((tmp_path / "faults").iterdir())
    return run_dir


def _damage_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[number - 1] = text + "\n"
    path.write_text("".join(lines), encoding="utf-8")


async def test_a_damaged_trials_line_is_named_by_rejudge_and_the_readers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no server is started
    run_dir = await _finished_run(tmp_path)
    trials = run_dir / "trials.jsonl"
    _damage_line(trials, 2, f'{{"case_id": "c00", "trial_index": {LONG}}}')
    assert main(["rejudge", str(run_dir), "--no-prefect"]) == 2
    assert _one_line_error(capsys) == f"{trials} (line 2): field trial_index: {LONG_SAYS}"
    _damage_line(trials, 2, DEEP)
    assert main(["rejudge", str(run_dir), "--no-prefect"]) == 2
    assert _one_line_error(capsys) == f"{trials} (line 2): {DEEP_SAYS}"
    with pytest.raises(UnreadableFile, match=r"trials\.jsonl \(line 2\): "):
        list(jsonl.iter_records(trials, Trial))
    judged = run_dir / "judged.jsonl"
    _damage_line(judged, 1, DEEP)
    with pytest.raises(UnreadableFile, match=r"judged\.jsonl \(line 1\): "):
        list(jsonl.iter_raw(judged))


async def test_a_damaged_run_json_is_one_line_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.chdir(ROOT)
    run_dir = await _finished_run(tmp_path)
    (run_dir / "run.json").write_text(f'{{"run_id": "x", "params": {DEEP}}}')
    assert main(["run", "--resume", str(run_dir), "--no-prefect"]) == 2
    said = _one_line_error(capsys)
    assert said == f"{run_dir / 'run.json'}: {DEEP_SAYS} (the run folder's run.json is damaged)"


def test_a_line_longer_than_a_record_may_be_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_FILE_BYTES", 100)
    path = tmp_path / "trials.jsonl"
    path.write_text('{"a": 1}\n' + '{"b": "' + "x" * 200 + '"}\n')
    with pytest.raises(UnreadableFile, match=r"trials\.jsonl \(line 2\): a line of more than"):
        list(jsonl.iter_raw(path))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (f'{{"case_id": "c00", "trial_index": 0, "turns": {DEEP}}}', DEEP_SAYS),
        ('{"case_id": "c00", "trial_index": "first"}', "field trial_index: not a Trial: "),
    ],
    ids=["deep", "not a trial"],
)
def test_a_resume_refuses_a_damaged_trials_file_before_it_starts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    says: str,
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.chdir(ROOT)
    run_dir = unfinished_run_dir(tmp_path, "tests.unit.files.test_limits:agent")
    trials = run_dir / "trials.jsonl"
    trials.write_text(line + "\n")
    assert main(["run", "--resume", str(run_dir), "--no-prefect"]) == 2
    said = _one_line_error(capsys)
    assert said.startswith(f"{trials} (line 1): ") and says in said
    assert trials.read_text() == line + "\n" and not (run_dir / "judged.jsonl").exists()
