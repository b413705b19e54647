"""Finding a side on this machine: run folders, results.json files, and ``latest`` in a
folder runs were published to (the same code path as S3, see tests/e2e)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from support.sample_results import sample_run

from agentflow_eval.compare.sides import SideError, is_latest, load_side
from agentflow_eval.files.results_json import write_results_json
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import publish_run, run_folder


def write_run_dir(directory: Path, run: RunResult, _eval_set: object = None) -> Path:
    """A finished run folder as publishing takes it; only results.json matters here."""
    write_results_json(run, directory / "results.json")
    (directory / "report.html").write_text("<!doctype html><title>report</title>")
    (directory / "junit.xml").write_text("<testsuites/>")
    return directory


def _night(base: RunResult, run_id: str, day: int) -> RunResult:
    started = base.started_at + timedelta(days=day)
    return base.model_copy(update={"run_id": run_id, "started_at": started, "finished_at": started})


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """Three nights published to a folder; each run's own folder too."""
    base, _eval_set = sample_run()
    root = tmp_path_factory.mktemp("published")
    site = root / "site"
    dirs = {}
    for day, run_id in enumerate(["night1", "night2", "night3"]):
        run = _night(base, run_id, day)
        dirs[run_id] = write_run_dir(root / "runs" / run_folder(run), run)
        assert publish_run(dirs[run_id], site).published
    return site, dirs


def test_a_run_folder_and_its_results_json(published: tuple[Path, dict[str, Path]]) -> None:
    _, dirs = published
    side = load_side(dirs["night2"])
    assert side.run.run_id == "night2" and side.run.trials == []
    assert side.source == str(dirs["night2"] / "results.json")
    assert load_side(str(dirs["night2"] / "results.json")).run == side.run


def test_latest_from_a_publish_folder(published: tuple[Path, dict[str, Path]]) -> None:
    site, _ = published
    side = load_side("latest", publish_to=site, eval_set_id="travel_agent_nightly")
    assert side.run.run_id == "night3"
    assert side.source.endswith("travel_agent_nightly/20261122T023000Z-night3/results.json")
    spelled_out = load_side(f"{site}/travel_agent_nightly/latest")
    assert spelled_out.run.run_id == "night3"


def test_latest_skips_the_run_being_compared(published: tuple[Path, dict[str, Path]]) -> None:
    site, _ = published
    side = load_side(
        "latest", publish_to=site, eval_set_id="travel_agent_nightly", exclude_run_id="night3"
    )
    assert side.run.run_id == "night2"


def test_latest_errors_are_one_line(published: tuple[Path, dict[str, Path]]) -> None:
    site, _ = published
    with pytest.raises(SideError, match="needs the publish target") as missing_target:
        load_side("latest", eval_set_id="travel_agent_nightly")
    with pytest.raises(SideError, match="needs the eval set's id"):
        load_side("latest", publish_to=site)
    with pytest.raises(SideError, match=r"other_set: no latest\.json") as unknown:
        load_side("latest", publish_to=site, eval_set_id="other_set")
    for error in (missing_target, unknown):
        assert "\n" not in str(error.value)


def test_latest_with_only_the_run_itself(tmp_path: Path) -> None:
    run, _eval_set = sample_run(run_id="only")
    run_dir = write_run_dir(tmp_path / "runs" / "only", run)
    assert publish_run(run_dir, tmp_path / "site").published
    with pytest.raises(SideError, match="the only published run is only"):
        load_side(
            "latest",
            publish_to=tmp_path / "site",
            eval_set_id="travel_agent_nightly",
            exclude_run_id="only",
        )


def test_missing_and_unsupported_sides(tmp_path: Path) -> None:
    empty = tmp_path / "empty_run"
    empty.mkdir()
    with pytest.raises(SideError, match=r"empty_run/results\.json: no such file \(a run folder"):
        load_side(empty)
    with pytest.raises(SideError, match=r"nowhere\.json: no such file"):
        load_side(tmp_path / "nowhere.json")
    with pytest.raises(SideError, match=r"not a run folder, a results\.json, an s3://"):
        load_side("https://example.com/results.json")
    with pytest.raises(SideError, match="empty"):
        load_side("  ")
    not_results = tmp_path / "config.json"
    not_results.write_text("{}")
    with pytest.raises(SideError, match=r"config\.json: no 'schema_version' key"):
        load_side(not_results)


def test_is_latest() -> None:
    assert is_latest("latest") and is_latest("s3://b/p/set/latest") and is_latest("d/set/latest/")
    assert not is_latest("runs/latest_run") and not is_latest("s3://b/p/set/run/results.json")
