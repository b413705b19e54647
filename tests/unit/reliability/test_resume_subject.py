"""A resume measures what the run measured: the same agent (spec and source file), the
same agent model and the same judge model — anything else is refused in one line naming
what differs, the folder byte for byte as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.cli import main
from agentflow_eval.models.request import RunRequest
from agentflow_eval.run.folder_lock import RunFolderLock
from agentflow_eval.run.plan import plan_request
from agentflow_eval.run.resume import ResumeMismatch
from tests.support.faults import ANSWER, answer_evalset, folder_digest

ROOT = Path(__file__).resolve().parents[3]
WEATHER = ROOT / "examples" / "weather"
AGENT_SOURCE = f"def agent(message: str) -> str:\n    return {ANSWER!r}\n"


def started(params: RunRequest) -> Path:
    """The folder of a run planned from ``params`` (planned, then let go)."""
    handle, _ = plan_request(params)
    handle.release()
    return handle.paths.run_dir


def refused(params: RunRequest, run_dir: Path) -> str:
    before = folder_digest(run_dir)
    with pytest.raises(ResumeMismatch) as error:
        plan_request(params.model_copy(update={"resume": str(run_dir)}))
    assert folder_digest(run_dir) == before
    RunFolderLock.acquire(run_dir).release()  # and it was let go
    message = str(error.value)
    assert "\n" not in message
    return message


def file_agent_params(tmp_path: Path) -> RunRequest:
    (tmp_path / "agent.py").write_text(AGENT_SOURCE, encoding="utf-8")
    evalset = tmp_path / "set.evalset.json"
    evalset.write_text(answer_evalset(2).model_dump_json(), encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text('{"criteria": {"response_match_score": 0.8}}', encoding="utf-8")
    return RunRequest(
        agent=f"{tmp_path / 'agent.py'}:agent",
        evalset=str(evalset),
        config=str(config),
        runs=2,
        output_dir=str(tmp_path / "out"),
    )


def test_another_agent_is_refused(tmp_path: Path) -> None:
    params = file_agent_params(tmp_path)
    run_dir = started(params)
    (tmp_path / "other.py").write_text(AGENT_SOURCE, encoding="utf-8")
    other = params.model_copy(update={"agent": f"{tmp_path / 'other.py'}:agent"})
    message = refused(other, run_dir)
    assert f"its agent is '{tmp_path / 'agent.py'}:agent', not '{tmp_path / 'other.py'}:agent'" in (
        message
    )


def test_the_agents_source_changed_is_refused(tmp_path: Path) -> None:
    params = file_agent_params(tmp_path)
    run_dir = started(params)
    (tmp_path / "agent.py").write_text(AGENT_SOURCE + "# another prompt\n", encoding="utf-8")
    assert "its agent's source file changed" in refused(params, run_dir)


def test_the_same_agent_resumes(tmp_path: Path) -> None:
    params = file_agent_params(tmp_path)
    run_dir = started(params)
    handle, _ = plan_request(params.model_copy(update={"resume": str(run_dir)}))
    assert handle.plan.resumed
    handle.release()


def weather_params(tmp_path: Path, **fields: str) -> RunRequest:
    return RunRequest(
        agent="examples.weather.agent:agent",
        evalset=str(WEATHER / "weather.evalset.json"),
        config=str(WEATHER / "eval_config.json"),
        output_dir=str(tmp_path),
        **fields,
    )


def test_another_agent_model_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run_dir = started(weather_params(tmp_path))
    message = refused(weather_params(tmp_path, model="agentflow-demo/other"), run_dir)
    assert "its agent model is 'agentflow-demo/weather', not 'agentflow-demo/other'" in message


def test_another_judge_model_is_refused(tmp_path: Path) -> None:
    params = file_agent_params(tmp_path)
    config = Path(str(params.config))
    config.write_text('{"criteria": {"final_response_match_v2": 0.8}}', encoding="utf-8")
    run_dir = started(params.model_copy(update={"judge_model": "agentflow-demo/judge"}))
    message = refused(params.model_copy(update={"judge_model": "agentflow-demo/j2"}), run_dir)
    assert "its judge model is 'agentflow-demo/judge', not 'agentflow-demo/j2'" in message


def test_the_cli_refuses_another_model_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no server is started
    monkeypatch.chdir(ROOT)
    run_dir = started(weather_params(tmp_path))
    before = folder_digest(run_dir)
    assert main(["run", "--resume", str(run_dir), "--model", "agentflow-demo/other"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "its agent model is 'agentflow-demo/weather'" in err
    assert folder_digest(run_dir) == before
