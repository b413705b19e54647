"""A run writes nothing through a symbolic link in its folder: a resume of a folder whose
lock, trials or any other entry is a link is refused in one line naming it (exit 2),
before anything is written, whatever the link points at; a link made while the run runs
is refused where the run appends, never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentflow_eval.cli import main
from agentflow_eval.files.jsonl import JsonlWriter
from agentflow_eval.files.no_follow import LinkInRunFolder
from agentflow_eval.models.results import Trial
from agentflow_eval.run import folder_lock
from agentflow_eval.run.folder_lock import LOCK_NAME, RunFolderLock
from tests.support.faults import ANSWER, unfinished_run_dir

ROOT = Path(__file__).resolve().parents[3]
PRECIOUS = "a file of the user's, outside the run folder\n"


def agent(message: str) -> str:
    return ANSWER


@pytest.fixture
def resumable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run folder that started and finished no trial, to resume without Prefect."""
    monkeypatch.chdir(ROOT)
    return unfinished_run_dir(tmp_path, "tests.unit.reliability.test_run_folder_links:agent")


@pytest.mark.parametrize("name", [LOCK_NAME, "trials.jsonl", "judged.jsonl"])
def test_a_resume_refuses_a_link_in_its_folder_and_leaves_its_target_alone(
    resumable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text(PRECIOUS, encoding="utf-8")
    (resumable / name).symlink_to(victim)
    before = sorted(p.name for p in resumable.iterdir())

    code = main(["run", "--resume", str(resumable), "--no-prefect"])

    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"agentflow-eval: error: {resumable / name}: is a symbolic link")
    assert victim.read_text(encoding="utf-8") == PRECIOUS
    assert sorted(p.name for p in resumable.iterdir()) == before  # nothing written


def test_the_same_folder_without_the_link_resumes(
    resumable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--resume", str(resumable), "--no-prefect", "--quiet"]) == 0
    assert len((resumable / "trials.jsonl").read_text(encoding="utf-8").splitlines()) == 6


def test_a_link_made_while_the_run_runs_is_refused_where_it_appends(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with RunFolderLock.acquire(run_dir):  # the folder was clean when the run took it
        victim = tmp_path / "victim.jsonl"
        victim.write_text('{"torn": ', encoding="utf-8")  # a tail a writer would cut
        (run_dir / "trials.jsonl").symlink_to(victim)
        with pytest.raises(LinkInRunFolder) as refused:
            JsonlWriter[Trial](run_dir / "trials.jsonl")
    assert refused.value.path == run_dir / "trials.jsonl"
    assert victim.read_text(encoding="utf-8") == '{"torn": '


def test_a_lock_file_made_a_link_after_the_check_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_lock, "refuse_links", lambda folder: None)  # made just after
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text(PRECIOUS, encoding="utf-8")
    os.symlink(victim, run_dir / LOCK_NAME)
    with pytest.raises(LinkInRunFolder):
        RunFolderLock.acquire(run_dir)
    assert victim.read_text(encoding="utf-8") == PRECIOUS
