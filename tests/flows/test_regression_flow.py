"""The regression flow in one process (no evaluate deployment: its eval sets run as
concurrent subflows): a first night with nothing to compare with, then a night where one
eval set's agent got worse — the suite's verdict, summary.json/html published, the
artifacts, the suite's events and the gate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.testing.fixtures import asserting_events_worker  # noqa: F401 (a fixture)

from agentflow_eval.flows.evaluate import evaluate
from agentflow_eval.flows.regression import regression
from agentflow_eval.models.regression import RegressionParams

AGENTS = """
import time
from pathlib import Path

MARKS = Path({marks!r})


def _together(name):
    # each eval set's agent waits for the other's first call: only runs that overlap
    # (the suite's subflows run concurrently) both see each other
    MARKS.mkdir(exist_ok=True)
    (MARKS / name).touch()
    other = "tokyo" if name == "paris" else "paris"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (MARKS / other).exists():
            return True
        time.sleep(0.05)
    return False


def paris(message):
    return "Light rain in Paris." if _together("paris") else "alone"


def tokyo(message):
    return "Sunny in Tokyo." if _together("tokyo") else "alone"


def paris_plain(message):
    return "Light rain in Paris."


def tokyo_plain(message):
    return "Sunny in Tokyo."


def broken(message):
    return "I have no idea."


def _version():
    return (MARKS.parent / "version.txt").read_text()


# one agent per eval set whose nightly versions differ ('latest' is the same agent's run)
def paris_agent(message):
    return (paris if _version() == "1" else broken)(message)


def tokyo_agent(message):
    return (tokyo if _version() == "1" else tokyo_plain)(message)
"""


def _evalset(path: Path, eval_set_id: str, case: str, question: str, word: str) -> str:
    path.write_text(
        json.dumps(
            {
                "eval_set_id": eval_set_id,
                "name": eval_set_id.replace("_", " ").title(),
                "eval_cases": [
                    {
                        "eval_id": case,
                        "conversation": [{"user_content": question}],
                        "expectations": [{"final_contains": word}],
                    }
                ],
            }
        )
    )
    return str(path)


@pytest.fixture
def suite_files(tmp_path: Path) -> dict[str, str]:
    agents = tmp_path / "suite_agents.py"
    agents.write_text(AGENTS.format(marks=str(tmp_path / "marks")))
    return {
        "paris": _evalset(
            tmp_path / "paris.evalset.json", "paris_weather", "rain", "Paris weather?", "rain"
        ),
        "tokyo": _evalset(
            tmp_path / "tokyo.evalset.json", "tokyo_weather", "sun", "Tokyo weather?", "Sunny"
        ),
        "agents": str(agents),
    }


def _params(files: dict[str, str], tmp_path: Path, paris: str, tokyo: str, **extra):
    return RegressionParams(
        suite="nightly",
        evals=[
            {"agent": f"{files['agents']}:{paris}", "evalset": files["paris"], "runs": 5},
            {"agent": f"{files['agents']}:{tokyo}", "evalset": files["tokyo"], "runs": 5},
        ],
        publish_to=str(tmp_path / "published"),
        output_dir=str(tmp_path / "out"),
        evaluate_deployment="",
        **extra,
    )


async def _artifact(key: str) -> object:
    async with get_client() as client:
        found = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
        )
    assert found, f"no artifact {key!r}"
    return max(found, key=lambda a: a.created).data


async def _events(worker) -> dict[str, object]:
    await asyncio.to_thread(worker.wait_until_empty)
    return {e.event: e for e in worker._client.events}


def _summaries(published: Path) -> list[Path]:
    return sorted((published / "regression" / "nightly").glob("*/summary.json"))


async def test_a_suite_of_two_eval_sets_first_night_then_a_regression(
    suite_files,
    tmp_path,
    asserting_events_worker,  # noqa: F811
) -> None:
    published = tmp_path / "published"

    # the first night: both eval sets run at once (each agent sees the other's call),
    # nothing to compare with yet, which passes the gate and says so
    (tmp_path / "version.txt").write_text("1")
    first = _params(suite_files, tmp_path, "paris_agent", "tokyo_agent", fail_on_regression=True)
    summary = await regression(**first.flow_parameters())
    assert [o.status for o in summary.evals] == ["not compared", "not compared"]
    assert [o.pass_rate for o in summary.evals] == [1.0, 1.0], "the subflows did not overlap"
    assert summary.verdict == "no significant change" and not summary.gate_failed
    assert all("no runs.json" in (o.problem or "") for o in summary.evals)
    assert all(o.report_url and o.report_url.endswith("/report.html") for o in summary.evals)
    (first_summary,) = _summaries(published)
    assert json.loads(first_summary.read_text())["verdict"] == "no significant change"
    latest = json.loads((published / "regression" / "nightly" / "latest.json").read_text())
    assert latest["folder"] == first_summary.parent.name
    events = await _events(asserting_events_worker)
    completed = events["agentflow.eval.suite-completed"]
    assert completed.resource.id == "agentflow.eval-suite.nightly"
    assert {r.id for r in completed.related} >= {
        "agentflow.eval-set.paris_weather",
        "agentflow.eval-set.tokyo_weather",
    }
    assert "agentflow.eval.suite-regressed" not in events
    assert "agentflow.eval.suite-incomplete" not in events
    asserting_events_worker._client.events.clear()

    # the next night Paris's agent is broken: a regression in that eval set only
    (tmp_path / "version.txt").write_text("2")
    second = _params(suite_files, tmp_path, "paris_agent", "tokyo_agent", fail_on_regression=True)
    state = await regression(**second.flow_parameters(), return_state=True)
    assert state.is_failed(), state.message
    assert "paris_weather (regression)" in state.message
    newest = _summaries(published)[-1]
    assert newest != first_summary
    data = json.loads(newest.read_text())
    assert data["verdict"] == "regression" and data["fail_on_regression"] is True
    paris, tokyo = data["evals"]
    assert paris["status"] == "regression" and tokyo["status"] == "no significant change"
    assert paris["regressed_cases"][0]["case_id"] == "rain"
    assert (paris["regressed_cases"][0]["baseline"], paris["regressed_cases"][0]["candidate"]) == (
        "5/5",
        "0/5",
    )
    assert paris["baseline_run_id"] == summary.evals[0].run_id
    page = (newest.parent / "summary.html").read_text()
    assert "▼" in page and "<code>rain</code>" in page
    # latest moved to this suite run: the summary is the newest whatever its verdict
    latest = json.loads((published / "regression" / "nightly" / "latest.json").read_text())
    assert latest["verdict"] == "regression"

    markdown = str(await _artifact("regression-nightly-summary"))
    assert "**regression**" in markdown and "paris_weather: regression" in markdown
    table = await _artifact("regression-nightly-evals")
    rows = json.loads(table) if isinstance(table, str) else table
    assert [r["status"] for r in rows] == ["regression", "no significant change"]

    events = await _events(asserting_events_worker)
    regressed = events["agentflow.eval.suite-regressed"]
    assert regressed.resource.id == "agentflow.eval-suite.nightly"
    eval_sets = [r.id for r in regressed.related if r.id.startswith("agentflow.eval-set.")]
    assert eval_sets == ["agentflow.eval-set.paris_weather"]
    (entry,) = regressed.payload["regressed"]
    assert entry["eval_set_id"] == "paris_weather"
    assert entry["regressed_cases"][0]["case_id"] == "rain"
    assert entry["report_url"].endswith("/report.html")
    # the eval set's own event comes from its evaluate run, under the suite's label
    own = events["agentflow.eval.regressed"]
    assert own.payload["labels"]["regression"].startswith("nightly@")
    assert "agentflow.eval.suite-publish-failed" not in events


async def test_an_eval_set_that_cannot_run_fails_the_suite_and_says_why(
    suite_files,
    tmp_path,
    caplog,
    asserting_events_worker,  # noqa: F811
) -> None:
    params = _params(suite_files, tmp_path, "paris_plain", "tokyo_plain")
    params.evals[1].evalset = str(tmp_path / "missing.evalset.json")
    # a deployment that does not exist: the eval sets run in this process all the same
    params.evaluate_deployment = "evaluate/not-deployed"
    summary = await regression(**params.flow_parameters())
    assert "no deployment 'evaluate/not-deployed': the 2 eval sets run as subflows" in caplog.text
    assert summary.verdict == "incomplete"
    failed = summary.evals[1]
    assert failed.status == "failed" and failed.eval_set_id == "missing"
    assert "its evaluate run ended Failed" in (failed.problem or "")
    assert summary.evals[0].status == "not compared"  # the other still ran and published
    events = await _events(asserting_events_worker)
    assert events["agentflow.eval.suite-completed"].payload["verdict"] == "incomplete"
    incomplete = events["agentflow.eval.suite-incomplete"]
    assert incomplete.resource.id == "agentflow.eval-suite.nightly"
    assert [r.id for r in incomplete.related if r.role == "eval-set"] == [
        "agentflow.eval-set.missing"
    ]
    (named,) = incomplete.payload["incomplete"]
    assert named["eval_set_id"] == "missing" and named["problem"] == failed.problem

    # under the gate the same suite fails, after writing its summary
    gated = params.model_copy(update={"fail_on_regression": True})
    state = await regression(**gated.flow_parameters(), return_state=True)
    assert state.is_failed() and "missing (failed)" in state.message


async def test_a_summary_that_cannot_be_published_is_stated_and_announced(
    suite_files,
    tmp_path,
    asserting_events_worker,  # noqa: F811
) -> None:
    params = _params(suite_files, tmp_path, "paris_plain", "tokyo_plain")
    # the eval sets' runs publish, but the suite's folder cannot be made: a file is there
    (tmp_path / "published").mkdir()
    (tmp_path / "published" / "regression").write_text("not a folder")
    summary = await regression(**params.flow_parameters())
    assert [o.status for o in summary.evals] == ["not compared", "not compared"]
    local = tmp_path / "out" / "regression" / "nightly"
    (kept,) = local.glob("*/summary.json")  # the local copy is there
    markdown = str(await _artifact("regression-nightly-summary"))
    assert "**Summary not published:**" in markdown and kept.parent.name in markdown
    events = await _events(asserting_events_worker)
    failed = events["agentflow.eval.suite-publish-failed"]
    assert failed.payload["target"] == str(tmp_path / "published")
    assert str(kept.parent) in failed.payload["message"]
    assert events["agentflow.eval.suite-completed"].payload["summary_url"] is None


def test_the_flow_is_registered_with_the_same_evaluate_flow() -> None:
    # the suite's subflows are the evaluate flow itself, not a copy with other defaults
    from agentflow_eval.flows import regression as module

    assert module.evaluate is evaluate


HANGING = """
import time
from pathlib import Path

RELEASE = Path({release!r})


def hangs(message):
    # holds its trial until the test lets it go (the suite has given up on it by then)
    while not RELEASE.exists():
        time.sleep(0.05)
    return "Light rain in Paris."
"""


async def test_an_eval_set_still_running_at_its_timeout_is_reported_incomplete(
    suite_files, tmp_path
) -> None:
    release = tmp_path / "release"
    agents = tmp_path / "hanging_agents.py"
    agents.write_text(HANGING.format(release=str(release)))
    params = RegressionParams(
        suite="nightly",
        evals=[{"agent": f"{agents}:hangs", "evalset": suite_files["paris"], "runs": 1}],
        publish_to=str(tmp_path / "published"),
        output_dir=str(tmp_path / "out"),
        evaluate_deployment="",
        eval_timeout_minutes=0.05,
    )
    try:
        summary = await regression(**params.flow_parameters())
    finally:
        release.touch()
    assert summary.verdict == "incomplete"
    (outcome,) = summary.evals
    assert outcome.status == "failed"
    assert "did not finish within 0.05 min (eval_timeout_minutes); cancelled" in (
        outcome.problem or ""
    )
