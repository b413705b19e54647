"""The user documentation runs: every block of docs/agents.md, docs/criteria.md,
docs/eval-sets.md, docs/environments.md, docs/mcp.md, docs/review.md, docs/traces.md
and each framework's page under docs/frameworks/, in order, in a fresh folder with this
checkout's environment — files written, commands run, outputs compared (see
tests/support/markdown_doc.py). The commands use the session's Prefect server
(tests/e2e/conftest.py). A framework's page runs where its extra is installed (CI
installs them all)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.markdown_doc import DocRun, blocks_of, venv_env

from agentflow_eval.demo.server import shared_demo_url
from tests.support.prefect_server import PrefectServer

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    "agents.md",
    "criteria.md",
    "eval-sets.md",
    "environments.md",
    "mcp.md",
    "review.md",
    "traces.md",
]
FRAMEWORK_PAGES = {
    "frameworks/adk.md": "google.adk",
    "frameworks/langgraph.md": "langgraph",
    "frameworks/openai_agents.md": "agents",
    "frameworks/pydantic_ai.md": "pydantic_ai",
    "frameworks/otel.md": "opentelemetry.sdk",
}


def doc_environment(project: Path, api_url: str) -> dict[str, str]:
    env = venv_env(Path(sys.executable).parent.parent, os.environ)
    env.update(
        PREFECT_HOME=str(project / ".prefect"),
        PREFECT_API_URL=api_url,
        COLUMNS="100",
        NO_COLOR="1",
    )
    env.pop("PYTHONPATH", None)  # the reader's project, not this repository's tests
    return env


@pytest.mark.parametrize("name", [*DOCS, *FRAMEWORK_PAGES])
def test_every_block_of_the_page_runs(
    name: str, tmp_path: Path, shared_prefect: PrefectServer
) -> None:
    if name in FRAMEWORK_PAGES:
        pytest.importorskip(FRAMEWORK_PAGES[name])
    blocks = blocks_of((ROOT / "docs" / name).read_text(encoding="utf-8"))
    env = doc_environment(tmp_path, shared_prefect.api_url)
    fields = {"repo": str(ROOT), "demo_url": shared_demo_url()}
    run = DocRun(tmp_path, env, fields=fields)
    run.run(blocks)
    assert len(run.done) == len(blocks)
