"""JUnit XML for CI systems: one ``<testcase>`` per eval case.

A case fails when its pass rate is below ``min_pass_rate`` (1.0 by default: every trial
must pass). A failing case gets a ``<failure>`` when some trial failed (or had no verdict
from) a criterion, naming passed/runs and the failing criteria, and an ``<error>`` when
some trial errored, naming the errors; both can appear, as pytest does for a test that
fails and errors in teardown. Pass rate, interval and pass@k are ``<property>`` elements.
Text from the run is stripped of characters XML 1.0 cannot carry.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from datetime import UTC
from pathlib import Path

from agentflow_eval.results import CaseResult, RunResult, TrialResult

__all__ = ["junit_xml", "write_junit"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_LIMIT = 500
OUTPUT_LIMIT = 300


def _text(value: object, limit: int | None = None) -> str:
    text = _NOT_XML.sub("\ufffd", str(value))
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
    line = f"trial {trial.trial_index + 1}: {result.status}"
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
        line += f"; answer: {_text(answer, OUTPUT_LIMIT)!r}"
    return line


def _testcase(
    suite: ET.Element, run: RunResult, case: CaseResult, results: list[TrialResult], min_rate: float
) -> tuple[bool, bool]:
    """Append one testcase; returns (has failure, has error)."""
    duration = sum(r.trial.duration_ms for r in results)
    node = _element(
        suite, "testcase", classname=run.eval_set_id, name=case.case_id, time=_seconds(duration)
    )
    props = _element(node, "properties")
    _element(props, "property", name="pass_rate", value=f"{case.pass_rate:.4f}")
    _element(props, "property", name="passed", value=f"{case.passed}/{case.runs}")
    _element(props, "property", name="ci95", value=f"{case.ci_low:.4f}-{case.ci_high:.4f}")
    for k, value in case.pass_at_k.items():
        _element(props, "property", name=f"pass@{k}", value=f"{value:.4f}")
    if case.label:
        _element(props, "property", name="criteria", value=case.label)

    failing = case.runs == 0 or case.pass_rate < min_rate
    has_failure = has_error = False
    if failing:
        judged_bad = [r for r in results if r.status in ("failed", "not_evaluated")]
        errored = [r for r in results if r.status == "errored"]
        if judged_bad or not errored:
            criteria = _failing_criteria(judged_bad)
            named = ", ".join(f"{name} ({n}×)" for name, n in criteria.most_common())
            message = f"passed {case.passed}/{case.runs} trials"
            if case.runs:
                message += f" ({case.pass_rate:.0%}, needs {min_rate:.0%})"
            if named:
                message += f"; failing: {named}"
            body = "\n".join(_trial_line(r) for r in judged_bad) or "no trials ran"
            _element(
                node, "failure", body, message=_text(message, MESSAGE_LIMIT), type="EvalFailure"
            )
            has_failure = True
        if errored:
            kinds = Counter(r.trial.error.kind for r in errored if r.trial.error is not None)
            message = f"{len(errored)}/{case.runs} trials errored: " + ", ".join(
                f"{kind} ({n}×)" for kind, n in kinds.most_common()
            )
            first = errored[0].trial.error
            error_type = (first.type or first.kind) if first is not None else "error"
            body = "\n".join(
                _trial_line(r)
                + (
                    f"\n{r.trial.error.traceback}"
                    if r.trial.error and r.trial.error.traceback
                    else ""
                )
                for r in errored
            )
            _element(node, "error", body, message=_text(message, MESSAGE_LIMIT), type=error_type)
            has_error = True
    _element(node, "system-out", "\n".join(_trial_line(r) for r in results))
    return has_failure, has_error


def junit_xml(run: RunResult, *, min_pass_rate: float = 1.0) -> str:
    """The run as a JUnit XML document (UTF-8 text with an XML declaration)."""
    if not 0.0 <= min_pass_rate <= 1.0:
        raise ValueError(f"min_pass_rate must be within 0..1, got {min_pass_rate}")
    by_case: dict[str, list[TrialResult]] = defaultdict(list)
    for result in run.trials:
        by_case[result.trial.case_id].append(result)
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
        ("agent_model", run.agent_model),
        ("judge_model", run.judge_model),
        ("simulated", str(run.simulated).lower()),
        ("runs_per_case", run.runs_per_case),
        ("pass_rate", f"{run.totals.pass_rate:.4f}"),
        ("ci95", f"{run.totals.ci_low:.4f}-{run.totals.ci_high:.4f}"),
        ("min_pass_rate", f"{min_pass_rate:.4f}"),
    ):
        if value is not None:
            _element(props, "property", name=name, value=value)

    failures = errors = 0
    for case in run.cases:
        results = sorted(by_case.get(case.case_id, []), key=lambda r: r.trial.trial_index)
        has_failure, has_error = _testcase(suite, run, case, results, min_pass_rate)
        failures += has_failure
        errors += has_error
    counts = {
        "tests": str(len(run.cases)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": "0",
        "time": f"{run.duration_s:.3f}",
    }
    suite.attrib.update(counts)
    root.attrib.update({k: v for k, v in counts.items() if k != "skipped"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(run: RunResult, path: Path, *, min_pass_rate: float = 1.0) -> Path:
    """Write :func:`junit_xml` to ``path``; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(run, min_pass_rate=min_pass_rate), encoding="utf-8")
    return path
