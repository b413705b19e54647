"""Fault matrix, areas 5 and 6 — inputs that would pass silently or fail late.

No silent passes: a rubric criterion with no rubric anywhere, a config whose criteria are
empty for a case without expectations, an eval set without cases — each is a load-time
error naming file, case and field, exit 2 from the CLI before anything starts.

Fail early, one line: data nested 100,000 levels deep (JSON, YAML flow and block style),
a FIFO or a device given as an eval set or config — one line, exit 2, no traceback, no
hang. (A run in which every trial errored exits 4: tests/e2e/test_faults_cli.py.)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentflow_eval.cli import main
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.loading import MAX_NESTING_DEPTH, read_document
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.run.plan import RunInputs, load_inputs
from tests.support.faults import ANSWER, answer_evalset

ROOT = Path(__file__).resolve().parents[3]
AGENT = "tests.unit.reliability.test_faults_inputs:agent"


def agent(message: str) -> str:
    return ANSWER


def write(path: Path, data: object) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def case(eval_id: str, **fields: object) -> dict[str, object]:
    return {"eval_id": eval_id, "conversation": [{"user_content": "hi"}], **fields}


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``cli(evalset, config) -> (exit code, stderr)``: the CLI up to its input checks (a
    Prefect API is named, so no server starts; none is reached before they pass)."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.chdir(ROOT)

    def run(evalset: Path, config: Path | None = None) -> tuple[int, str]:
        args = ["run", AGENT, str(evalset)] + (["--config", str(config)] if config else [])
        code = main(args)
        return code, capsys.readouterr().err.strip()

    return run


# ------------------------------------------------------------------ no silent passes


SILENT_PASSES: list[tuple[str, dict[str, object], dict[str, object], str]] = [
    (
        "rubric criterion, no rubric anywhere",
        {"eval_set_id": "s", "eval_cases": [case("a", expectations=["completes"])]},
        {"criteria": {"rubric_based_final_response_quality_v1": {"threshold": 0.5}}},
        "criteria.rubric_based_final_response_quality_v1: criterion "
        "'rubric_based_final_response_quality_v1' has no rubrics to judge",
    ),
    (
        "tool-use rubrics, none given",
        {"eval_set_id": "s", "eval_cases": [case("a")]},
        {"criteria": {"rubric_based_tool_use_quality_v1": {}}},
        "has no rubrics to judge",
    ),
    (
        "criteria: {} and no expectations",
        {"eval_set_id": "s", "eval_cases": [case("a", expectations=["completes"]), case("b")]},
        {"criteria": {}},
        "case 'b': no criterion judges this case",
    ),
    (
        "no cases",
        {"eval_set_id": "s", "eval_cases": []},
        {"criteria": {"response_match_score": 0.8}},
        "eval_cases: eval set 's' has no cases",
    ),
]


@pytest.mark.parametrize(
    ("evalset", "config", "says"),
    [item[1:] for item in SILENT_PASSES],
    ids=[item[0] for item in SILENT_PASSES],
)
def test_what_would_pass_unchecked_is_refused_at_load_time(
    tmp_path: Path, cli, evalset: dict[str, object], config: dict[str, object], says: str
) -> None:
    evalset_path = write(tmp_path / "s.evalset.json", evalset)
    config_path = write(tmp_path / "config.json", config)
    with pytest.raises(EvalFileError, match=says.replace("(", r"\(").replace(")", r"\)")):
        load_inputs(evalset_path, config_path)
    code, err = cli(evalset_path, config_path)
    assert code == 2 and err.count("\n") == 0 and says in err
    assert err.startswith("agentflow-eval: error: ") and "Traceback" not in err


def test_rubrics_anywhere_make_a_rubric_criterion_usable(tmp_path: Path) -> None:
    rubric = {"rubric_id": "polite", "rubric_content": "The answer is polite."}
    evalset = {"eval_set_id": "s", "eval_cases": [case("a", rubrics=[rubric]), case("b")]}
    config = {"criteria": {"rubric_based_final_response_quality_v1": {"threshold": 0.5}}}
    inputs = load_inputs(
        write(tmp_path / "s.evalset.json", evalset), write(tmp_path / "c.json", config)
    )
    assert len(inputs.eval_set.eval_cases) == 2


def test_a_judge_key_variable_that_is_not_set_is_named_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FAULT_TEST_UNSET_KEY", raising=False)
    config = EvalConfig.model_validate(
        {
            "criteria": {"final_response_match_v2": 0.8},
            "judge": {"api_key_env": "FAULT_TEST_UNSET_KEY"},
        }
    )
    with pytest.raises(EvalFileError, match=r"judge\.api_key_env: the judge's API key variable"):
        RunInputs.of(answer_evalset(1), config)
    monkeypatch.setenv("FAULT_TEST_UNSET_KEY", "a-judge-key-123")
    RunInputs.of(answer_evalset(1), config)


def test_objects_are_checked_the_same_way() -> None:
    with pytest.raises(EvalFileError, match="case 'c00': no criterion judges this case"):
        RunInputs.of(answer_evalset(1), EvalConfig())


# ------------------------------------------------------------------ fail early, one line


def deep_json(levels: int) -> str:
    return '{"eval_set_id": "deep", "eval_cases": ' + "[" * levels + "]" * levels + "}"


DEEP = 100_000
BAD_FILES: dict[str, Callable[[Path], Path]] = {
    "json 100k levels": lambda d: write(d / "deep.evalset.json", deep_json(DEEP)),
    "json just past the limit": lambda d: write(
        d / "deep.evalset.json", deep_json(MAX_NESTING_DEPTH + 5)
    ),
    "yaml flow 100k levels": lambda d: write(
        d / "deep.evalset.yaml", "eval_set_id: deep\neval_cases: " + "[" * DEEP + "]" * DEEP
    ),
    "yaml block 100k levels": lambda d: write(
        d / "deep.evalset.yaml", "eval_set_id: deep\neval_cases:\n" + "- " * DEEP + "x\n"
    ),
    "yaml mapping 100k levels": lambda d: write(
        d / "deep.evalset.yaml",
        "eval_set_id: deep\neval_cases: " + "{a: " * DEEP + "1" + "}" * DEEP,
    ),
}


@pytest.mark.parametrize("make", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_deep_nesting_is_one_line_not_a_recursion_error(tmp_path: Path, cli, make) -> None:
    path = make(tmp_path)
    with pytest.raises(EvalFileError, match=f"nested more than {MAX_NESTING_DEPTH} levels deep"):
        read_document(path)
    code, err = cli(path)
    assert code == 2 and err.count("\n") == 0 and str(path) in err
    assert "RecursionError" not in err


def test_ordinary_nesting_is_fine(tmp_path: Path) -> None:
    nested: object = "leaf"
    for _ in range(MAX_NESTING_DEPTH - 5):
        nested = {"k": nested}
    assert read_document(write(tmp_path / "ok.json", {"deep": nested}))["deep"]["k"]


LAUGHS = "eval_set_id: bomb\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]\n" for n in range(1, 10)
)
"""Nine levels of nine aliases: 387 million values once expanded, in ten lines."""


def test_a_yaml_alias_bomb_is_one_line_at_once(tmp_path: Path, cli) -> None:
    path = write(tmp_path / "laughs.evalset.yaml", LAUGHS)
    failure = in_thread(lambda: read_document(path), timeout_s=10.0)
    assert isinstance(failure, EvalFileError)
    assert "aliases expand to more than 1,000,000 values" in str(failure)
    code, err = cli(path)
    assert code == 2 and err.count("\n") == 0 and str(path) in err


def test_yaml_aliases_used_as_anchors_for_shared_values_still_load(tmp_path: Path) -> None:
    text = (
        "eval_set_id: shared\n"
        "x-trajectory: &weather [{name: get_weather, args: {location: Tokyo}}]\n"
        "eval_cases:\n"
        + "".join(
            f"  - eval_id: c{n}\n    conversation:\n      - user_content: Tokyo?\n"
            "        expected_tool_trajectory: *weather\n"
            for n in range(50)
        )
    )
    data = read_document(write(tmp_path / "shared.evalset.yaml", text))
    assert len(data["eval_cases"]) == 50


def in_thread(call: Callable[[], object], timeout_s: float = 20.0) -> BaseException | None:
    """Run ``call`` in a thread; the exception it raised (a hang fails the test)."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert outcome, "hung reading a special file"
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("name", ["pipe.evalset.json", "test_config.json"])
def test_a_fifo_is_refused_without_hanging(tmp_path: Path, name: str, cli) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    error = in_thread(lambda: read_document(fifo))
    assert isinstance(error, EvalFileError) and "is a named pipe (FIFO), not a regular file" in str(
        error
    )
    if name.endswith(".evalset.json"):
        code, err = cli(fifo)
    else:
        code, err = cli(write(tmp_path / "s.evalset.json", answer_evalset(1).model_dump()), fifo)
    assert code == 2 and "FIFO" in err and err.count("\n") == 0


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_behind_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "endless.evalset.json"
    link.symlink_to("/dev/zero")
    error = in_thread(lambda: read_document(link))
    assert isinstance(error, EvalFileError) and "is a character device" in str(error)


def test_a_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path: Path, cli) -> None:
    path = tmp_path / "huge.evalset.json"
    with path.open("wb") as out:  # sparse: the size is checked, nothing is read
        out.truncate(200 * 1024 * 1024)
    with pytest.raises(EvalFileError, match=r"is 200\.0 MiB, more than the 64\.0 MiB"):
        read_document(path)
    small = write(tmp_path / "small.evalset.json", {"eval_set_id": "s", "eval_cases": []})
    with pytest.raises(EvalFileError, match=r"more than the 0\.0 KiB"):
        read_document(small, max_bytes=10)
    code, err = cli(path)
    assert code == 2 and err.count("\n") == 0 and "split it into several files" in err


def test_the_size_limit_is_a_setting_of_the_front_door(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--max-file-mb, else $AGENTFLOW_MAX_FILE_MB, else 64 MiB: a file over the limit set
    is refused unread (exit 2, one line naming it), a limit that is no size is refused."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no server starts
    monkeypatch.chdir(ROOT)
    evalset = write(
        tmp_path / "set.evalset.json",
        {"eval_set_id": "s", "eval_cases": [case(f"c{i}") for i in range(40)]},
    )
    assert 2048 < evalset.stat().st_size < 2**20

    def run(*flags: str) -> tuple[int, str]:
        code = main(["run", AGENT, str(evalset), *flags])
        return code, capsys.readouterr().err.strip()

    code, err = run("--max-file-mb", "0.001")
    assert code == 2 and err.count("\n") == 0
    assert f"{evalset}: is " in err and "more than the 1.0 KiB" in err
    monkeypatch.setenv("AGENTFLOW_MAX_FILE_MB", "0.002")
    code, err = run()
    assert code == 2 and "more than the 2.0 KiB" in err
    code, err = run("--max-file-mb", "0.001")  # the flag over the variable
    assert code == 2 and "more than the 1.0 KiB" in err
    monkeypatch.setenv("AGENTFLOW_MAX_FILE_MB", "lots")
    code, err = run()
    assert code == 2 and err.count("\n") == 0 and "AGENTFLOW_MAX_FILE_MB" in err
    assert "got 'lots'" in err
