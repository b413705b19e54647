"""JUnit XML for CI systems: one ``<testcase>`` per eval case.

A case fails when its pass rate is below ``min_pass_rate`` (a run's: its
``min_case_pass_rate``, else its ``min_pass_rate``; 1.0 by default: every trial must
pass). A failing case gets a ``<failure>`` when some trial failed (or had no verdict
from) a criterion, naming passed/runs and the failing criteria, and an ``<error>`` when
some trial errored, naming the errors; both can appear, as pytest does for a test that
fails and errors in teardown. Pass rate, interval and pass@k are ``<property>`` elements.
Text from the run is stripped of characters XML 1.0 cannot carry.

A run compared with a baseline carries the comparison as properties (the suite's verdict,
each case's baseline counts, change and Holm-adjusted p-value) and one more testcase,
:data:`COMPARISON_TESTCASE`. Only under ``fail_on_regression`` does a regression fail
anything: each regressed case gets a ``<failure>`` saying so (or its failure says it
too), and the comparison testcase fails.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING

from agentflow_eval.compare.brief import case_change_text, comparison_lines
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.case_trials import CaseWithTrials, TrialsInMemory, each_case
from agentflow_eval.files.naming import printable
from agentflow_eval.models.results import CaseResult, RunResult, TrialResult
from agentflow_eval.report.scorecard import actual_calls_text, expected_calls_text

if TYPE_CHECKING:
    from agentflow_eval.compare.models import CaseComparison, RunComparison

__all__ = ["COMPARISON_TESTCASE", "JUnitDocument", "junit_xml", "write_junit"]

COMPARISON_TESTCASE = "comparison with the baseline"
"""With a baseline, the suite's last testcase: it fails under ``fail_on_regression``
when the run regressed (overall or in a case) or the baseline could not be read."""

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_LIMIT = 500
OUTPUT_LIMIT = 300


def _text(value: object, limit: int | None = None) -> str:
    # control characters shown as escapes, as on a terminal (CI tools print these
    # attributes and messages to theirs); what XML still cannot hold is replaced
    text = _NOT_XML.sub("\ufffd", printable(str(value)))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _element(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: _text(v) for k, v in attrs.items()})
    if text is not None:
        node.text = _text(text)
    return node


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _failing_criteria(results: list[TrialResult]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for result in results:
        for verdict in result.criteria:
            if verdict.status in ("failed", "not_evaluated"):
                counts[verdict.label or verdict.criterion] += 1
    return counts


def _trial_line(result: TrialResult) -> str:
    trial = result.trial
    line = f"trial {trial.number}: {result.status}"
    if trial.error is not None:
        return f"{line} ({trial.error.kind}: {_text(trial.error.message, OUTPUT_LIMIT)})"
    bad = [
        f"{v.label or v.criterion}=" + ("not evaluated" if v.score is None else f"{v.score:.2f}")
        for v in result.criteria
        if v.status in ("failed", "not_evaluated")
    ]
    if bad:
        line += " (" + ", ".join(bad) + ")"
    answer = trial.final_response
    if answer:
        line += f"; answer: {_text(repr(answer), OUTPUT_LIMIT)}"  # repr: escapes shown once
    return line


def _failure_body(case: CaseResult, results: list[TrialResult]) -> str:
    """The failing trials, each with the tool calls it made, under the calls the case
    expects (where it expects any)::

        expected   get_weather(location="Tokyo") → get_weather(location="London")
        trial 2: failed (trajectory IN_ORDER=0.50); answer: '...'
          actual   get_weather(location="Tokyo")
    """
    if not results:
        return "no trials ran"
    expects_calls = any(turn.tool_calls for turn in case.expected)
    lines = [f"expected   {expected_calls_text(case.expected)}"] if expects_calls else []
    for result in results:
        lines.append(_trial_line(result))
        if expects_calls or result.trial.tool_calls:
            lines.append(f"  actual   {actual_calls_text(result)}")
    return "\n".join(lines)


def _outcome(case: CaseResult, min_rate: float, regressed: bool = False) -> tuple[bool, bool]:
    """Whether the case's testcase carries a ``<failure>`` and an ``<error>``: decided
    from its counts (and whether it counts as regressed) alone, so the suite's totals can
    be written before any trial is read."""
    if not (case.runs == 0 or case.pass_rate < min_rate):
        return regressed, False
    judged_bad = case.failed + case.not_evaluated > 0
    return judged_bad or not case.errored or regressed, case.errored > 0


def _regression_message(change: CaseComparison, baseline_run: str) -> str:
    return f"regressed from baseline run {baseline_run}: {case_change_text(change)}"


def _comparison_properties(props: ET.Element, change: CaseComparison) -> None:
    if change.baseline is not None:
        _element(
            props,
            "property",
            name="baseline_passed",
            value=f"{change.baseline.passed}/{change.baseline.runs}",
        )
    if change.change is not None:
        _element(props, "property", name="change", value=f"{change.change:+.4f}")
    if change.p_adjusted is not None:
        _element(props, "property", name="p_holm", value=f"{change.p_adjusted:.4g}")
    _element(props, "property", name="comparison_verdict", value=change.verdict)


def _testcase(
    run: RunResult,
    case: CaseResult,
    results: list[TrialResult],
    min_rate: float,
    change: CaseComparison | None = None,
    regression: str | None = None,
) -> ET.Element:
    """One case's ``<testcase>`` (``results``: its trials, sorted by trial index).
    ``change``: the case against the baseline; ``regression``: why it fails as regressed
    (only under ``fail_on_regression``)."""
    duration = sum(r.trial.duration_ms for r in results)
    node = ET.Element(
        "testcase",
        {
            "classname": _text(run.eval_set_id),
            "name": _text(case.case_id),
            "time": _seconds(duration),
        },
    )
    props = _element(node, "properties")
    _element(props, "property", name="pass_rate", value=f"{case.pass_rate:.4f}")
    _element(props, "property", name="passed", value=f"{case.passed}/{case.rated_runs}")
    _element(props, "property", name="ci95", value=f"{case.ci_low:.4f}-{case.ci_high:.4f}")
    for k, value in case.pass_at_k.items():
        _element(props, "property", name=f"pass@{k}", value=f"{value:.4f}")
    if case.label:
        _element(props, "property", name="criteria", value=case.label)
    if change is not None:
        _comparison_properties(props, change)

    has_failure, has_error = _outcome(case, min_rate, regression is not None)
    if has_failure:
        judged_bad = [r for r in results if r.status in ("failed", "not_evaluated")]
        criteria = _failing_criteria(judged_bad)
        named = ", ".join(f"{name} ({n}×)" for name, n in criteria.most_common())
        message = f"passed {case.passed}/{case.rated_runs} trials"
        if case.runs:
            message += f" ({case.pass_rate:.0%}, needs {min_rate:.0%})"
        if named:
            message += f"; failing: {named}"
        if regression is not None:
            message = f"{regression}; {message}"
        body = _failure_body(case, judged_bad)
        kind = "Regression" if regression is not None else "EvalFailure"
        _element(node, "failure", body, message=_text(message, MESSAGE_LIMIT), type=kind)
    if has_error:
        errored = [r for r in results if r.status == "errored"]
        kinds = Counter(r.trial.error.kind for r in errored if r.trial.error is not None)
        message = f"{len(errored)}/{case.runs} trials errored: " + ", ".join(
            f"{kind} ({n}×)" for kind, n in kinds.most_common()
        )
        first = errored[0].trial.error if errored else None
        error_type = (first.type or first.kind) if first is not None else "error"
        body = "\n".join(
            _trial_line(r)
            + (f"\n{r.trial.error.traceback}" if r.trial.error and r.trial.error.traceback else "")
            for r in errored
        )
        _element(node, "error", body, message=_text(message, MESSAGE_LIMIT), type=error_type)
    _element(node, "system-out", "\n".join(_trial_line(r) for r in results))
    return node


_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
_CASES_SLOT = "agentflow-eval-testcases"
"""A placeholder element where the testcases go: the document around them is built and
indented once, by ElementTree, and cut at the placeholder."""
_CASE_LEVEL = 2
"""How deep a ``<testcase>`` sits: testsuites > testsuite > testcase."""
_CASE_SEPARATOR = "\n" + "  " * _CASE_LEVEL


class JUnitDocument:
    """A run's JUnit XML written in pieces: :meth:`head`, then :meth:`testcase` for each
    case in ``run.cases`` order, then :meth:`tail`. Joined, they are the document
    ElementTree would write for the whole tree, while only one case's trials are needed
    at a time (the suite's counts come from the case summaries)."""

    def __init__(
        self,
        run: RunResult,
        *,
        min_pass_rate: float = 1.0,
        comparison: RunComparison | None = None,
    ) -> None:
        if not 0.0 <= min_pass_rate <= 1.0:
            raise ValueError(f"min_pass_rate must be within 0..1, got {min_pass_rate}")
        self.run = run
        self.min_pass_rate = min_pass_rate
        self.comparison = comparison
        compared = comparison.comparison if comparison is not None else None
        self._changes = {case.case_id: case for case in compared.cases} if compared else {}
        self._regressions: dict[str, str] = {}
        if compared is not None and comparison is not None and comparison.fail_on_regression:
            self._regressions = {
                case.case_id: _regression_message(case, compared.baseline.run_id)
                for case in compared.cases
                if case.verdict == "regression"
            }
        self._written = 0
        self._head, self._tail = self._frame()

    def _frame(self) -> tuple[str, str]:
        run = self.run
        root = ET.Element("testsuites", name="agentflow-eval")
        started = run.started_at.astimezone(UTC) if run.started_at.tzinfo else run.started_at
        suite = _element(
            root,
            "testsuite",
            name=run.eval_set_id,
            timestamp=started.strftime("%Y-%m-%dT%H:%M:%S"),
            hostname="agentflow-eval",
        )
        props = _element(suite, "properties")
        for name, value in (
            ("run_id", run.run_id),
            ("agent", run.agent),
            ("agent_version", run.agent_version),
            ("git_sha", run.git_sha),
            *((f"label.{key}", value) for key, value in sorted(run.labels.items())),
            ("agent_model", run.agent_model),
            ("judge_model", run.judge_model),
            ("simulated", str(run.simulated).lower()),
            ("runs_per_case", run.runs_per_case),
            ("pass_rate", f"{run.totals.pass_rate:.4f}"),
            ("ci95", f"{run.totals.ci_low:.4f}-{run.totals.ci_high:.4f}"),
            ("min_pass_rate", f"{self.min_pass_rate:.4f}"),
            *self._comparison_properties(),
        ):
            if value is not None:
                _element(props, "property", name=name, value=value)
        outcomes = [
            _outcome(case, self.min_pass_rate, case.case_id in self._regressions)
            for case in run.cases
        ]
        if self.comparison is not None:
            outcomes.append((self.comparison.gate_failed, False))
        counts = {
            "tests": str(len(outcomes)),
            "failures": str(sum(failure for failure, _ in outcomes)),
            "errors": str(sum(error for _, error in outcomes)),
            "skipped": "0",
            "time": f"{run.duration_s:.3f}",
        }
        suite.attrib.update(counts)
        root.attrib.update({k: v for k, v in counts.items() if k != "skipped"})
        if run.cases:
            ET.SubElement(suite, _CASES_SLOT)
        if self.comparison is not None:
            suite.append(self._comparison_testcase(self.comparison))
        ET.indent(root)
        text = _DECLARATION + ET.tostring(root, encoding="unicode") + "\n"
        if not run.cases:
            return text, ""
        head, tail = text.split(f"<{_CASES_SLOT} />")
        return head, tail

    def _comparison_properties(self) -> list[tuple[str, str | None]]:
        record = self.comparison
        if record is None:
            return []
        found: list[tuple[str, str | None]] = [
            ("baseline", record.baseline),
            ("fail_on_regression", str(record.fail_on_regression).lower()),
        ]
        if record.comparison is None:
            problem = record.problem
            return [*found, ("baseline_problem", problem.message if problem else "not compared")]
        compared = record.comparison
        overall = compared.overall
        return [
            *found,
            ("baseline_run_id", compared.baseline.run_id),
            ("comparison_verdict", overall.verdict),
            ("comparison_change", None if overall.change is None else f"{overall.change:+.4f}"),
            ("regressed", str(compared.regressed).lower()),
        ]

    def _comparison_testcase(self, record: RunComparison) -> ET.Element:
        node = ET.Element(
            "testcase",
            {"classname": _text(self.run.eval_set_id), "name": COMPARISON_TESTCASE, "time": "0"},
        )
        lines = comparison_lines(record)
        if record.gate_failed:
            message = (
                lines[0]
                if record.comparison is None
                else f"regressed from baseline run {record.comparison.baseline.run_id}: "
                + lines[1].strip()
            )
            _element(
                node,
                "failure",
                "\n".join(lines),
                message=_text(message, MESSAGE_LIMIT),
                type="Regression",
            )
        _element(node, "system-out", "\n".join(lines))
        return node

    def head(self) -> str:
        return self._head

    def testcase(self, case: CaseResult, results: list[TrialResult]) -> str:
        """The ``<testcase>`` of the next case, with the layout before it."""
        node = _testcase(
            self.run,
            case,
            results,
            self.min_pass_rate,
            self._changes.get(case.case_id),
            self._regressions.get(case.case_id),
        )
        ET.indent(node, level=_CASE_LEVEL)
        separator = _CASE_SEPARATOR if self._written else ""
        self._written += 1
        return separator + ET.tostring(node, encoding="unicode")

    def tail(self) -> str:
        if self._written != len(self.run.cases):
            raise ValueError(
                f"JUnit document of run {self.run.run_id}: {self._written} of "
                f"{len(self.run.cases)} testcases written"
            )
        return self._tail

    def chunks(self, cases: Iterable[CaseWithTrials]) -> Iterator[str]:
        """The whole document, reading ``cases`` (each of ``run.cases`` with its trials,
        in that order) one at a time."""
        yield self.head()
        for case, results in cases:
            yield self.testcase(case, results)
        yield self.tail()


def junit_xml(run: RunResult, *, min_pass_rate: float = 1.0) -> str:
    """The run (trials in ``run.trials``) as a JUnit XML document (UTF-8 text with an
    XML declaration)."""
    document = JUnitDocument(run, min_pass_rate=min_pass_rate)
    return "".join(document.chunks(each_case(run.cases, TrialsInMemory(run.trials))))


def write_junit(run: RunResult, path: Path, *, min_pass_rate: float = 1.0) -> Path:
    """Write :func:`junit_xml` to ``path``, atomically; returns the path."""
    document = JUnitDocument(run, min_pass_rate=min_pass_rate)
    cases = each_case(run.cases, TrialsInMemory(run.trials))
    return write_text_atomically(path, document.chunks(cases))
