"""The report stage written case by case from judged.jsonl: the same files as the
in-memory writers, every trial in the page (in its case's packed details), and one case's
trials in memory at a time."""

from __future__ import annotations

import gc
import json
import random
import weakref
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from support.judged_file import JudgedFile, write_judged_file
from support.report_page import case_blocks
from support.sample_results import START, sample_run

from agentflow_eval.files.case_trials import JudgedFileTrials
from agentflow_eval.files.jsonl import iter_records
from agentflow_eval.files.results_json import results_json_chunks
from agentflow_eval.models.results import CriterionResult, RunResult, Trial, TrialResult
from agentflow_eval.report import read_results_json, write_html, write_junit, write_results_json
from agentflow_eval.report.case_details import unpack_case
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.html import render_html
from agentflow_eval.report.junit import JUnitDocument, junit_xml
from agentflow_eval.report.templating import compact, compact_chunks
from agentflow_eval.report.writer import write_case_reports
from agentflow_eval.run.aggregate import aggregate, aggregate_judged

REPO = Path(__file__).resolve().parents[3]
FILES = ("results.json", "report.html", "junit.xml")


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> JudgedFile:
    return write_judged_file(tmp_path_factory.mktemp("run"), trials=3)


@pytest.fixture(scope="module")
def streamed(judged: JudgedFile) -> RunResult:
    return judged.write_reports()


def test_streamed_files_equal_the_in_memory_writers(
    tmp_path: Path, judged: JudgedFile, streamed: RunResult
) -> None:
    run = aggregate(
        judged.eval_set,
        judged.config,
        iter_records(judged.paths.judged, TrialResult),
        judged.meta,
        finished_at=judged.finished_at,
    )
    assert {"errored", "failed", "passed"} <= {r.status for r in run.trials}
    write_results_json(run, tmp_path / "results.json")
    write_html(run, tmp_path / "report.html")
    write_junit(run, tmp_path / "junit.xml")
    for name in FILES:
        assert (judged.paths.run_dir / name).read_bytes() == (tmp_path / name).read_bytes(), name
    assert streamed == run.model_copy(update={"trials": []})
    assert read_results_json(judged.paths.results) == run
    assert json.loads(judged.paths.results.read_text()) == json.loads(run.model_dump_json())


def test_streamed_results_json_matches_the_published_schema(
    judged: JudgedFile, streamed: RunResult
) -> None:
    schema = json.loads((REPO / "docs" / "results.schema.json").read_text(encoding="utf-8"))
    document = json.loads(judged.paths.results.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)
    keys = [(t["trial"]["case_id"], t["trial"]["trial_index"]) for t in document["trials"]]
    assert keys == sorted(keys) and len(keys) == len(set(keys)) == streamed.totals.trials


def test_streamed_page_details_every_trial_of_every_case(
    judged: JudgedFile, streamed: RunResult
) -> None:
    page = (judged.paths.run_dir / "report.html").read_text(encoding="utf-8")
    blocks = {case_id: unpack_case(block) for case_id, block in case_blocks(page).items()}
    assert list(blocks) == [case.case_id for case in streamed.cases]
    trials = [trial for details in blocks.values() for trial in details["trials"]]
    assert len(trials) == streamed.totals.trials == len(judged.counted)
    for case in streamed.cases:
        assert [t["index"] for t in blocks[case.case_id]["trials"]] == [0, 1, 2]
        assert case.runs == 3
    answers = [turn.get("answer") for trial in trials for turn in trial["turns"]]
    assert "A SECOND LINE FOR AN EXISTING TRIAL" not in answers
    assert "A SECOND LINE FOR AN EXISTING TRIAL" not in page
    assert "not_in_this_eval_set" not in page
    junit = (judged.paths.run_dir / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase ") == len(streamed.cases)
    assert "A SECOND LINE" not in junit


class _CountingTrials:
    """Reads trials through a :class:`JudgedFileTrials`, recording how often each case is
    read and how many trials handed out earlier are still alive at each read."""

    def __init__(self, inner: JudgedFileTrials) -> None:
        self.inner = inner
        self.reads: Counter[str] = Counter()
        self.handed_out: list[weakref.ref[TrialResult]] = []
        self.most_alive_at_a_read = 0
        self.most_held = 0

    def alive(self) -> int:
        gc.collect()
        return sum(ref() is not None for ref in self.handed_out)

    def trials_of(self, case_id: str) -> list[TrialResult]:
        earlier = self.alive()
        self.most_alive_at_a_read = max(self.most_alive_at_a_read, earlier)
        results = self.inner.trials_of(case_id)
        self.most_held = max(self.most_held, earlier + len(results))
        self.reads[case_id] += 1
        self.handed_out.extend(weakref.ref(r) for r in results)
        return results


def test_each_case_is_read_once_and_dropped_before_the_next(
    tmp_path: Path, judged: JudgedFile
) -> None:
    digest = TrialDigest()
    run, index = aggregate_judged(
        judged.eval_set, judged.config, judged.paths.judged, judged.meta, on_trial=digest.add
    )
    counting = _CountingTrials(index)
    write_case_reports(run, counting, digest, tmp_path)
    assert counting.reads == Counter({case.case_id: 1 for case in run.cases})
    assert counting.most_alive_at_a_read == 0
    assert counting.most_held == run.runs_per_case == 3
    assert len(counting.handed_out) == run.totals.trials
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    blocks = case_blocks(page).values()
    assert sum(len(unpack_case(block)["trials"]) for block in blocks) == run.totals.trials


def _verdict(name: str, label: str, score: float, details: dict[str, object]) -> CriterionResult:
    return CriterionResult(
        criterion=name, label=label, status="passed", score=score, threshold=0.5, details=details
    )


def _judged(case_id: str, index: int, *verdicts: CriterionResult) -> TrialResult:
    trial = Trial(case_id=case_id, trial_index=index, started_at=START)
    return TrialResult(trial=trial, criteria=list(verdicts), status="passed")


def test_the_digest_reads_as_the_trials_sorted_by_case_and_trial_would() -> None:
    """Criteria are listed, labelled and their settings ordered as the first verdict in
    (case id, trial index) order has them, whatever order the trials arrive in."""
    first = _judged("a", 0, _verdict("x", "x first", 1.0, {"mode": "strict", "model": "m"}))
    trials = [
        first,
        _judged("a", 1, _verdict("x", "x later", 0.55, {"model": "m", "mode": "strict"})),
        _judged(
            "b",
            0,
            _verdict("y", "y", 0.2, {}),
            _verdict("x", "x later", 0.3, {"model": "m", "mode": "strict", "n": 1}),
        ),
    ]
    for arrival in (trials, trials[::-1], [trials[2], trials[0], trials[1]]):
        digest = TrialDigest.of(arrival)
        histograms = digest.histograms()
        assert [(h.criterion, h.label, h.total) for h in histograms] == [
            ("x", "x first", 3),
            ("y", "y", 1),
        ]
        assert [b.count for b in histograms[0].bins] == [0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1]
        assert list(digest.shared_details()["x"].items()) == [("mode", "strict"), ("model", "m")]
    assert TrialDigest.of(trials[:2]).shared_details() == {}  # fewer than three verdicts


def test_the_digest_of_a_sample_run_does_not_depend_on_the_order() -> None:
    run, _ = sample_run(trials=4)
    shuffled = list(run.trials)
    random.Random(11).shuffle(shuffled)
    in_order, out_of_order = TrialDigest.of(run.trials), TrialDigest.of(shuffled)
    assert out_of_order.histograms() == in_order.histograms()
    assert sum(h.total for h in in_order.histograms()) > 0
    shared = in_order.shared_details()
    assert shared, "the sample's criteria repeat settings"
    assert {k: list(v.items()) for k, v in out_of_order.shared_details().items()} == {
        k: list(v.items()) for k, v in shared.items()
    }


@pytest.mark.parametrize("buffer", [1, 7, 64, 4096])
def test_compacting_in_pieces_equals_compacting_the_page(buffer: int) -> None:
    run, _ = sample_run(cases=3, trials=2)
    page = render_html(run)
    raw = page.replace(">\n<", ">\n    \t\n  <")  # put indentation back between the tags
    rng = random.Random(buffer)
    cuts = sorted(rng.sample(range(1, len(raw)), 200))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    assert "".join(compact_chunks(pieces, buffer)) == compact(raw) == page


def test_results_json_of_a_run_without_cases_or_trials_and_one_source_of_trials() -> None:
    run, _ = sample_run(cases=1, trials=1)
    empty = run.model_copy(update={"cases": [], "trials": []})
    assert "".join(results_json_chunks(empty)) == empty.model_dump_json(indent=2)
    assert "".join(results_json_chunks(run)) == run.model_dump_json(indent=2)
    with pytest.raises(ValueError, match="not both"):
        list(results_json_chunks(run, trial_lines=[b"{}"]))


def test_junit_of_a_run_without_cases_and_a_document_left_unfinished() -> None:
    run, _ = sample_run(cases=1, trials=1)
    empty = run.model_copy(update={"cases": [], "trials": []})
    assert 'tests="0" failures="0" errors="0"' in junit_xml(empty)
    document = JUnitDocument(run)
    document.head()
    with pytest.raises(ValueError, match="0 of 1 testcases written"):
        document.tail()
