"""Eval sets and configs checked without running anything, every problem found (not the
first): what ``agentflow-eval eval-set validate`` reports.

A file is a config when it holds criteria (or is named like ADK's ``test_config.json``),
else an eval set. An eval set is checked with its config (the ``test_config.json``
beside it, else ADK's default criteria) as a run would check it: that every case is
judged, that rubric criteria have rubrics, that scenarios have a simulated user. What a
run would warn of and run anyway (an expectation no criterion judges, a field ADK records
that nothing reads) is reported as a warning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentflow_eval.criteria.config_files import checked_config, load_config
from agentflow_eval.criteria.coverage import unjudged_warnings
from agentflow_eval.criteria.registry import known_criteria, unknown_criterion_message
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.files.loading import (
    CONFIG_FILE_NAME,
    find_config_for,
    load_evalset,
    read_document,
)
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.components import load_components
from agentflow_eval.run.inputs import check_scenarios, criteria_problems

__all__ = ["FileCheck", "validate_files"]


@dataclass
class FileCheck:
    """What checking one file found: its problems (each naming the file it is in) or, with
    none, a one-line summary."""

    path: Path
    kind: str
    summary: str = ""
    problems: list[tuple[Path, Problem]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per problem (``file: case 'x': field: message``), else the summary."""
        if self.problems:
            return [f"{path}: {problem.describe()}" for path, problem in self.problems]
        return [f"{self.path}: {self.summary}"]

    def warning_lines(self) -> list[str]:
        """One line per warning (``file: warning: ...``): what a run would warn of, and
        run anyway."""
        return [f"{self.path}: warning: {warning}" for warning in self.warnings]


def _is_config(path: Path) -> bool:
    if path.name == CONFIG_FILE_NAME or "config" in path.stem.lower().split("."):
        return True
    try:
        document = read_document(path)
    except InputError:
        return False
    return isinstance(document, dict) and "criteria" in document and "eval_cases" not in document


def _add(check: FileCheck, error: EvalFileError) -> None:
    check.problems.extend((error.path, problem) for problem in error.problems)


def _unknown_criteria(path: Path) -> list[Problem]:
    """The criteria a config file names that no criterion answers to, read from the file
    as written (its other problems may keep it from loading at all)."""
    try:
        document = read_document(path)
    except InputError:
        return []
    criteria = document.get("criteria") if isinstance(document, dict) else None
    if not isinstance(criteria, dict):
        return []
    known = set(known_criteria())
    return [
        Problem(
            message=unknown_criterion_message(name),
            field=f"criteria.{name}",
        )
        for name, entry in criteria.items()
        if name not in known and not (isinstance(entry, dict) and entry.get("function"))
    ]


def _check_config(path: Path) -> FileCheck:
    check = FileCheck(path, "config")
    try:
        config = load_config(path)
    except EvalFileError as exc:
        _add(check, exc)
        check.problems.extend((path, problem) for problem in _unknown_criteria(path))
        return check
    for where, problems in criteria_problems(config, path).items():
        check.problems.extend((Path(where), problem) for problem in problems)
    names = ", ".join(config.criteria) or "no criteria"
    check.summary = f"config, {len(config.criteria)} criteria ({names})"
    check.warnings = list(config.load_warnings)
    return check


def _check_evalset(path: Path, config_path: Path | None) -> FileCheck:
    check = FileCheck(path, "eval set")
    try:
        loaded = load_evalset(path)
    except EvalFileError as exc:
        _add(check, exc)
        return check
    chosen = config_path or find_config_for(path)
    try:
        config = load_config(chosen) if chosen else EvalConfig.default()
    except EvalFileError as exc:
        _add(check, exc)
        return check
    eval_set = loaded.eval_set
    for where, problems in criteria_problems(
        config, chosen or "(default criteria)", eval_set, path
    ).items():
        check.problems.extend((Path(where), problem) for problem in problems)
    try:
        check_scenarios(eval_set, config, path, chosen)
    except EvalFileError as exc:
        _add(check, exc)
    try:
        load_components(eval_set, path)  # their functions import and take their inputs
    except EvalFileError as exc:
        _add(check, exc)
    check.summary = f"eval set {eval_set.eval_set_id!r}, {_contents(eval_set)}; " + (
        f"judged by {chosen.name} ({len(config.criteria)} criteria)"
        if chosen
        else _judged_by_default(eval_set, config)
    )
    check.warnings = [*loaded.warnings, *config.load_warnings, *_unjudged(eval_set, config)]
    return check


def _unjudged(eval_set: EvalSet, config: EvalConfig) -> list[str]:
    """What a run of the eval set would warn of: expectations no criterion judges (a
    config whose options do not fit is a problem reported already)."""
    try:
        checked = checked_config(config)
    except EvalFileError:
        return []
    return unjudged_warnings(eval_set, checked)


def _contents(eval_set: EvalSet) -> str:
    """How many cases, turns and expected tool calls; the component cases apart."""
    agent_cases = [case for case in eval_set.eval_cases if case.component is None]
    turns = sum(len(case.conversation) for case in agent_cases)
    calls = sum(
        len(inv.expected_tool_trajectory) for case in agent_cases for inv in case.conversation
    )
    components = len(eval_set.eval_cases) - len(agent_cases)
    if not agent_cases:
        return _counted(components, "component case")
    said = ", ".join(
        [
            _counted(len(eval_set.eval_cases), "case"),
            _counted(turns, "turn"),
            _counted(calls, "expected tool call"),
        ]
    )
    return said + (f", {_counted(components, 'component case')}" if components else "")


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _judged_by_default(eval_set: EvalSet, config: EvalConfig) -> str:
    if all(case.component is not None for case in eval_set.eval_cases):
        return "each judged by its expected output (output_matches)"
    count = len(config.criteria)
    return f"judged by the default criteria ({count} {'criterion' if count == 1 else 'criteria'})"


def validate_files(
    paths: Iterable[str | Path], *, config: str | Path | None = None
) -> list[FileCheck]:
    """Check each file (see the module); ``config`` judges every eval set instead of the
    config beside it."""
    config_path = Path(config) if config is not None else None
    checks = []
    for given in paths:
        path = Path(given)
        checks.append(
            _check_config(path) if _is_config(path) else _check_evalset(path, config_path)
        )
    return checks
