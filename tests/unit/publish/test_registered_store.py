"""Stores: the built-in forms (a folder, ``s3://``) in one table, and a store of one's own
registered for a scheme of its own (``shelf://``, a folder-like store written here) used
by everything that opens a store: publishing (and publishing later what could not be),
baseline lookup, the judge cache; declared by an installed package too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from support.installed_package import installed_package
from support.sample_results import sample_run, write_run_dir

from agentflow_eval.compare.baseline import compare_with_baseline
from agentflow_eval.compare.sides import SideError, load_side
from agentflow_eval.criteria.judges.cache import StoreJudgeCache
from agentflow_eval.criteria.judges.prompt import PromptTemplate
from agentflow_eval.criteria.judges.runtime import JudgeOptions, JudgeRequest, JudgeRuntime
from agentflow_eval.errors import StoreError
from agentflow_eval.models.config import CriterionConfig, JudgeSettings
from agentflow_eval.models.results import RunResult
from agentflow_eval.publish.publisher import (
    PENDING_MARKER,
    RetryPolicy,
    publish_pending,
    publish_run,
    run_folder,
)
from agentflow_eval.storage import base as storage_base
from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.s3 import S3Store
from agentflow_eval.storage.stores import (
    BUILTIN_STORES,
    ENTRY_POINT_GROUP,
    STORES,
    StoreForm,
    open_store,
    register_store,
)
from agentflow_eval.storage.targets import StoreTarget, parse_target
from agentflow_eval.testing import Reply, ScriptedOpenAIServer

STORAGE = Path(storage_base.__file__).parent


def store_classes() -> set[str]:
    """The classes of the storage package with every method of a store, read from the
    source (the ``ObjectStore`` protocols themselves aside)."""
    methods = {"describe", "put", "get", "url"}
    found: set[str] = set()
    for path in sorted(STORAGE.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            defined = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
            protocol = any(getattr(base, "id", "") == "Protocol" for base in node.bases)
            if methods <= defined and not protocol:
                found.add(node.name)
    return found


def test_every_store_of_the_package_is_behind_a_built_in_form(tmp_path: Path) -> None:
    assert {form.scheme for form in BUILTIN_STORES} == {"file", "s3"}
    opened = {
        type(open_store(parse_target(text))).__name__
        for text in (str(tmp_path), f"file://{tmp_path}", "s3://bucket/prefix")
    }
    assert opened == store_classes() == {LocalStore.__name__, S3Store.__name__}


@dataclass
class Shelves:
    """Where the shelves are, and whether they take writes."""

    root: Path
    down: bool = False


@dataclass
class ShelfStore:
    """A folder-like store: ``shelf://<shelf>/<path>`` keeps objects under
    ``<root>/<shelf>/<path>``; while the shelves are down, every write fails."""

    shelves: Shelves
    where: str

    @property
    def folder(self) -> Path:
        return self.shelves.root / self.where.removeprefix("shelf://")

    def describe(self) -> str:
        return self.where

    def put(self, key: str, body: bytes, content_type: str, cache_control: str | None) -> None:
        if self.shelves.down:
            raise StoreError(f"{self.where}: the shelf is down", transient=True)
        path = self.folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)

    def get(self, key: str) -> bytes | None:
        path = self.folder / key
        return path.read_bytes() if path.is_file() else None

    def url(self, key: str) -> str:
        return f"{self.where}/{key}"


@pytest.fixture
def shelves(tmp_path: Path) -> Iterator[Shelves]:
    """``shelf://`` registered for this test, its shelves under ``tmp_path/shelves``."""
    shelves = Shelves(tmp_path / "shelves")
    form = register_store(
        StoreForm("shelf", "shelf://name/prefix", lambda target: ShelfStore(shelves, target.url))
    )
    yield shelves
    STORES.remove(form.scheme)


def _run(run_id: str, hours_later: int = 0) -> RunResult:
    run, _ = sample_run(cases=2, trials=2, run_id=run_id)
    run.started_at += timedelta(hours=hours_later)
    run.finished_at += timedelta(hours=hours_later)
    return run


def _run_dir(tmp_path: Path, run: RunResult) -> Path:
    return write_run_dir(tmp_path / "runs" / run_folder(run), run)


def test_a_registered_store_is_published_to_and_its_runs_are_baselines(
    tmp_path: Path, shelves: Shelves
) -> None:
    older, newer = _run("older"), _run("newer", hours_later=24)
    outcome = publish_run(_run_dir(tmp_path, older), "shelf://nightly/evals")
    assert outcome.published, outcome.message
    folder = f"{older.eval_set_id}/{run_folder(older)}"
    assert outcome.report_url == f"shelf://nightly/evals/{folder}/report.html"
    published = shelves.root / "nightly" / "evals"
    assert (published / folder / "results.json").is_file()
    assert (published / older.eval_set_id / "latest.json").is_file()

    latest = load_side("latest", publish_to="shelf://nightly/evals", eval_set_id=older.eval_set_id)
    assert latest.run.run_id == "older"
    assert latest.source == f"shelf://nightly/evals/{folder}/results.json"
    written = load_side(f"shelf://nightly/evals/{older.eval_set_id}/latest")
    assert written.run.run_id == "older"
    by_folder = load_side(f"shelf://nightly/evals/{folder}")
    assert by_folder.source == latest.source

    record = compare_with_baseline(newer, "latest", publish_to="shelf://nightly/evals")
    assert record.problem is None and record.comparison is not None
    assert record.comparison.baseline.source == latest.source
    assert record.comparison.baseline.run_id == "older"


def test_a_run_the_store_refused_is_published_there_later(tmp_path: Path, shelves: Shelves) -> None:
    run_dir = _run_dir(tmp_path, _run("pending"))
    shelves.down = True
    quick = RetryPolicy(attempts=2, base_delay_s=0, max_delay_s=0)
    outcome = publish_run(run_dir, "shelf://nightly/evals", retry=quick)
    shelves.down = False
    assert not outcome.published and "the shelf is down" in outcome.message
    assert '"url": "shelf://nightly/evals"' in (run_dir / PENDING_MARKER).read_text()
    again = publish_pending(run_dir)  # to the target it recorded
    assert again.published, again.message
    assert not (run_dir / PENDING_MARKER).exists()
    assert again.report_url is not None and again.report_url.startswith("shelf://nightly/evals/")


async def test_the_judge_cache_kept_in_a_registered_store_is_shared(
    shelves: Shelves, server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTFLOW_TEST_JUDGE_KEY", "test")
    settings = JudgeSettings(
        model="openai/judge", api_base=server.url, api_key_env="AGENTFLOW_TEST_JUDGE_KEY"
    )
    template = PromptTemplate(name="t", version="1", source="{{ q }}")

    async def ask() -> bool:
        # each runtime as another process would make it, its cache opened from the target
        cache = StoreJudgeCache(open_store(parse_target("shelf://cache/judges")))
        runtime = JudgeRuntime(settings, cache=cache)
        options = JudgeOptions.resolve(CriterionConfig(), settings)
        reply = await runtime.ask(JudgeRequest("crit", template, "valid?", options, 0), str)
        assert reply.value == '{"verdict": "valid"}'
        return reply.cached

    server.push(Reply.text('{"verdict": "valid"}'))
    assert await ask() is False
    assert await ask() is True
    assert len(server.requests) == 1
    assert list((shelves.root / "cache" / "judges").rglob("*.json"))


def test_a_scheme_is_a_store_only_while_registered(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="scheme 'shelf' is not supported; expected a dir"):
        parse_target("shelf://nightly/evals")
    with pytest.raises(SideError, match=r"not a run folder, a results\.json, an s3://"):
        load_side("shelf://nightly/evals/x/latest")
    form = register_store(StoreForm("shelf", "shelf://name/prefix", lambda target: None))
    try:
        assert parse_target("SHELF://nightly/evals") == StoreTarget(url="SHELF://nightly/evals")
        with pytest.raises(ValueError, match=r"or shelf://name/prefix$"):
            parse_target("gs://bucket")
    finally:
        STORES.remove(form.scheme)
    with pytest.raises(ValueError, match="store scheme 'Shelf Store'"):
        StoreForm("Shelf Store", "?", lambda target: None)


SHELF_PACKAGE = """
import os
from pathlib import Path

from agentflow_eval.storage.local import LocalStore
from agentflow_eval.storage.stores import StoreForm


def open_shelf(target):
    return LocalStore(Path(os.environ["SHELF_ROOT"]) / target.url.removeprefix("shelf://"))


FORM = StoreForm("shelf", "shelf://name/prefix", open_shelf)
"""


def test_an_installed_packages_store_is_published_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELF_ROOT", str(tmp_path / "shelves"))
    run = _run("installed")
    package = installed_package(
        tmp_path / "site",
        "shelf-store",
        entry_points={ENTRY_POINT_GROUP: {"shelf": "shelf_store:FORM"}},
        modules={"shelf_store.py": SHELF_PACKAGE},
        reload=[STORES],
    )
    with package:
        outcome = publish_run(_run_dir(tmp_path, run), "shelf://nightly")
        assert outcome.published, outcome.message
    published = tmp_path / "shelves" / "nightly" / run.eval_set_id / run_folder(run)
    assert (published / "report.html").is_file()
    with pytest.raises(ValueError, match="scheme 'shelf' is not supported"):
        parse_target("shelf://nightly")
