"""results.json: round trip, schema versions, clear errors, the published schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from support.sample_results import sample_run

from agentflow_eval.files.results_json import (
    ResultsFileError,
    read_results_json,
    results_json_schema,
    write_results_json,
)
from agentflow_eval.models.results import SCHEMA_VERSION, RunResult

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def run() -> RunResult:
    return sample_run(trials=2)[0]


def test_round_trip_keeps_every_field(tmp_path: Path, run: RunResult) -> None:
    path = write_results_json(run, tmp_path / "nested" / "results.json")
    assert read_results_json(path) == run
    assert not [p for p in path.parent.iterdir() if p.name != "results.json"]  # no temp left


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("2.0", "results schema version '2.0' is not supported; this agentflow-eval reads 1.0 to"),
        ("1.9", "written by a newer agentflow-eval: upgrade to read it"),
        ("0.3", "written by an incompatible version"),
        ("one", "'one' is not supported"),
        (1.0, "1.0 is not supported"),
    ],
)
def test_other_schema_versions_are_refused(
    tmp_path: Path, run: RunResult, version: object, message: str
) -> None:
    data = json.loads(run.model_dump_json())
    data["schema_version"] = version
    with pytest.raises(ResultsFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_results_json(_write(tmp_path, data))


def test_same_major_older_minor_is_read(tmp_path: Path, run: RunResult) -> None:
    data = json.loads(run.model_dump_json())
    data["schema_version"] = SCHEMA_VERSION.split(".")[0] + ".0"
    assert read_results_json(_write(tmp_path, data)).run_id == run.run_id


def test_missing_version_not_json_and_wrong_shapes_say_what_is_wrong(
    tmp_path: Path, run: RunResult
) -> None:
    data = json.loads(run.model_dump_json())
    del data["schema_version"]
    with pytest.raises(ResultsFileError, match="no 'schema_version' key"):
        read_results_json(_write(tmp_path, data))
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "1.0",', encoding="utf-8")
    with pytest.raises(ResultsFileError, match=r"bad.json: invalid JSON at line 1, column"):
        read_results_json(bad)
    with pytest.raises(ResultsFileError, match="expected a JSON object, found list"):
        read_results_json(_write(tmp_path, [1]))
    data = json.loads(run.model_dump_json())
    data["totals"]["trials"] = "many"
    data["surprise"] = 1
    with pytest.raises(ResultsFileError, match=r"totals.trials: .*surprise: Extra inputs"):
        read_results_json(_write(tmp_path, data))


def test_schema_validates_a_real_file_and_rejects_a_broken_one(run: RunResult) -> None:
    schema = results_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    document = json.loads(run.model_dump_json())
    validator.validate(document)
    document["schema_version"] = "2.0"
    document["cases"][0]["runs"] = "five"
    errors = {tuple(e.absolute_path) for e in validator.iter_errors(document)}
    assert ("schema_version",) in errors and ("cases", 0, "runs") in errors


def test_published_schema_file_is_current() -> None:
    published = json.loads((REPO / "docs" / "results.schema.json").read_text(encoding="utf-8"))
    assert published == results_json_schema(), (
        "docs/results.schema.json is stale; regenerate it: .venv/bin/python -c 'import json; "
        "from agentflow_eval.report import results_json_schema as s; "
        "print(json.dumps(s(), indent=2, ensure_ascii=False))' > docs/results.schema.json"
    )
