"""A file an ``--output`` names is written over only when it is a run's output of the kind
the command writes (agentflow_eval/files/overwriting.py), or with ``--force``; anything
else is one line naming the file, exit 2, and nothing written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.sample_results import sample_run, write_run_dir

from tests.support.cli_in_process import CliResult

EVALSET = "examples/weather/weather.evalset.json"
RUN = ("run", "examples.weather.agent:agent", EVALSET, "--runs", "1", "--no-prefect", "--quiet")
NOTES = "my notes, not a run's\n"


def _refused(done: CliResult, path: Path, what: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == (
        f"agentflow-eval: error: {path}: the file exists{what}; give --force to write over it\n"
    )
    assert done.stdout == ""


def test_run_refuses_to_write_its_json_report_over_another_file(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    mine = tmp_path / "out" / "results.json"
    mine.parent.mkdir()
    mine.write_text('{"my": "data"}\n')
    done = cli(*RUN, "--output", str(mine))
    _refused(done, mine, " and is not a run's JSON report (results.json)")
    assert mine.read_text() == '{"my": "data"}\n'
    assert [p.name for p in mine.parent.iterdir()] == ["results.json"]  # no run folder


def test_rejudge_refuses_too(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    run, _ = sample_run(trials=1)
    source = write_run_dir(tmp_path / "source", run)
    mine = tmp_path / "notes.json"
    mine.write_text(NOTES)
    done = cli("rejudge", str(source), "--no-prefect", "--output", str(mine))
    _refused(done, mine, " and is not a run's JSON report (results.json)")
    assert mine.read_text() == NOTES


def test_run_writes_over_an_earlier_json_report_and_over_anything_with_force(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    report = tmp_path / "report.json"
    first = cli(*RUN, "--output", str(report))
    assert first.returncode == 0, first.stderr[-2000:]
    earlier = report.read_text()
    again = cli(*RUN, "--output", str(report))  # a run's JSON report: written over
    assert again.returncode == 0, again.stderr[-2000:]
    assert report.read_text() != earlier  # another run id
    report.write_text(NOTES)
    forced = cli(*RUN, "--output", str(report), "--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert report.read_text().startswith('{\n  "schema_version": ')


def test_report_refuses_another_html_file_and_writes_over_a_report(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    run, _ = sample_run(trials=1)
    run_dir = write_run_dir(tmp_path / "run", run)
    page = tmp_path / "page.html"
    page.write_text("<html><body>my page</body></html>\n")
    done = cli("report", str(run_dir), "--output", str(page))
    _refused(done, page, " and is not an HTML report agentflow-eval wrote")
    assert page.read_text() == "<html><body>my page</body></html>\n"
    assert cli("report", str(run_dir), "--output", str(page), "--force").returncode == 0
    assert "weather_multi_city" in page.read_text()
    assert cli("report", str(run_dir), "--output", str(page)).returncode == 0  # now a report
    (run_dir / "report.html").write_text(NOTES)  # the default output, beside results.json
    _refused(
        cli("report", str(run_dir)),
        run_dir / "report.html",
        " and is not an HTML report agentflow-eval wrote",
    )


@pytest.mark.parametrize("existing", ["an eval set", "anything"])
def test_convert_refuses_any_file_that_exists(
    tmp_path: Path, cli: Callable[..., CliResult], existing: str
) -> None:
    out = tmp_path / "for-adk.evalset.json"
    out.write_text(NOTES if existing == "anything" else Path(EVALSET).read_text())
    before = out.read_text()
    done = cli("eval-set", "convert", EVALSET, "--to", "adk", "-o", str(out))
    _refused(done, out, "")
    assert out.read_text() == before
    forced = cli("eval-set", "convert", EVALSET, "--to", "adk", "-o", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert '"evalSetId"' in out.read_text() or '"eval_set_id"' in out.read_text()
