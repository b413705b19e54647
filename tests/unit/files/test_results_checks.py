"""A results.json from elsewhere is checked before anything trusts it: counts that add
up, cases present, finite numbers of a possible size — refused in one line naming the
file and the field, by the reader and by every command that reads one (compare, report,
publish). Ids with escape sequences or newlines are shown escaped wherever printed."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.sample_results import sample_run

from agentflow_eval.cli import main
from agentflow_eval.files.results_json import ResultsFileError, read_results_json

Forgery = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    run, _ = sample_run(trials=4)
    return json.loads(run.model_dump_json())


def _set_case(field: str, value: Any) -> Forgery:
    def forge(doc: dict[str, Any]) -> None:
        doc["cases"][1][field] = value

    return forge


def _set_total(field: str, value: Any) -> Forgery:
    def forge(doc: dict[str, Any]) -> None:
        doc["totals"][field] = value

    return forge


def _no_cases(doc: dict[str, Any]) -> None:
    doc["cases"] = []


def _more_runs_than_per_case(doc: dict[str, Any]) -> None:
    case = doc["cases"][0]
    case["runs"] += 3
    case["failed"] += 3
    doc["totals"]["trials"] += 3
    doc["totals"]["failed"] += 3


FORGERIES: list[tuple[str, Forgery, str]] = [
    ("outcomes", _set_case("passed", 0), "field cases[1] (case "),
    ("outcomes sum", _set_case("passed", 0), "passed + failed + errored + not_evaluated"),
    ("totals", _set_total("passed", 1), "field totals.passed: 1, but the cases add up to"),
    ("trials", _set_total("trials", 10**17), "field totals.trials: 1e+17 is beyond any"),
    ("no cases", _no_cases, "field cases: no cases"),
    ("runs", _more_runs_than_per_case, "more than the run's 4 runs per case"),
    ("NaN", _set_case("pass_rate", float("nan")), "field cases[1].pass_rate: nan is not a"),
    ("Infinity", _set_total("ci_high", float("inf")), "field totals.ci_high: inf is not a"),
    ("rate", _set_total("pass_rate", 1.5), "field totals.pass_rate: 1.5 is not a rate"),
    ("negative", _set_case("errored", -1), "errored: -1 is negative"),
]


def forged(tmp_path: Path, document: dict[str, Any], forge: Forgery) -> Path:
    doc = copy.deepcopy(document)
    forge(doc)
    run_dir = tmp_path / "forged"
    run_dir.mkdir(exist_ok=True)
    # json writes NaN and Infinity as JavaScript does, as a forger's file would have them
    (run_dir / "results.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return run_dir


@pytest.mark.parametrize(("what", "forge", "says"), FORGERIES, ids=[f[0] for f in FORGERIES])
def test_a_forged_file_is_refused_naming_the_file_and_field(
    tmp_path: Path, document: dict[str, Any], what: str, forge: Forgery, says: str
) -> None:
    path = forged(tmp_path, document, forge) / "results.json"
    with pytest.raises(ResultsFileError) as refused:
        read_results_json(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ") and says in message and "\n" not in message


def test_the_sample_itself_is_accepted(tmp_path: Path, document: dict[str, Any]) -> None:
    read_results_json(forged(tmp_path, document, lambda doc: None) / "results.json")


@pytest.mark.parametrize("command", ["compare", "report", "publish"])
def test_every_command_refuses_a_forged_file_in_one_line(
    tmp_path: Path,
    document: dict[str, Any],
    command: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_dir = forged(tmp_path, document, _set_total("failed", 10**17))
    for name in ("report.html", "junit.xml"):  # a finished run's other files
        (run_dir / name).write_text("<html></html>" if name.endswith("html") else "<x/>")
    args = {
        "compare": ["compare", str(run_dir), str(run_dir)],
        "report": ["report", str(run_dir)],
        "publish": ["publish", str(run_dir), "--to", str(tmp_path / "site")],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(run_dir / "results.json") in err
    assert "field totals.failed" in err
    assert not (tmp_path / "site").exists()  # nothing published


def test_escape_sequences_and_newlines_in_ids_are_escaped(
    tmp_path: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    evil = "weather\x1b[2J\x1b]8;;http://x\x07\nfake row"

    def rename(doc: dict[str, Any]) -> None:
        doc["cases"][0]["case_id"] = evil
        doc["eval_set_id"] = "set\x1b[31m"

    run_dir = forged(tmp_path, document, rename)
    assert read_results_json(run_dir / "results.json").cases[0].case_id == evil  # kept as is
    assert main(["compare", str(run_dir), str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "weather\\x1b[2J" in out and "\nfake row" not in out

    # the same id in a refusal is escaped too
    def inconsistent(doc: dict[str, Any]) -> None:
        rename(doc)
        doc["cases"][0]["passed"] += 1

    run_dir = forged(tmp_path, document, inconsistent)
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err, repr(err)
    assert err.strip().count("\n") == 0 and "weather\\x1b[2J" in err
