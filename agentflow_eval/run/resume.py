"""What a resume must find unchanged: the eval set it was started with (its id, each
case's content), the judging config, the runs per case, and what it measures (the agent's
spec and source file, the agent's model and the judges' model). Anything else is refused
in one line, the folder left as it was; so is a folder whose trials or judged trials
cannot be read back, before any stage meets them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from agentflow_eval.errors import InputError
from agentflow_eval.files.jsonl import check_records
from agentflow_eval.files.naming import printable
from agentflow_eval.models.results import Trial, TrialResult
from agentflow_eval.run.agent_code import RunSubject
from agentflow_eval.run.inputs import RunInputs
from agentflow_eval.run.paths import RunPaths
from agentflow_eval.run.run_json import RunRecord
from agentflow_eval.run.settings import RunOptions

__all__ = ["ResumeMismatch", "check_resume", "check_stage_files", "fingerprint"]


class ResumeMismatch(InputError):
    """``--resume`` with inputs that are not the run folder's."""


_OPERATIONAL_CONFIG: dict[str, Any] = {
    "max_concurrency": True,
    "trial_timeout_s": True,
    "rate_limits": True,
    "runs": True,
    "judge": {
        "max_concurrency": True,
        "timeout_s": True,
        "max_retries": True,
        "retry_base_delay_s": True,
        "retry_max_delay_s": True,
        "cache": True,
        "refresh_cache": True,
        "cache_expiration_s": True,
    },
}
"""Config settings that change how a run goes, not what it measures: a resume may change
them (runs per case are checked on their own)."""


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprint(inputs: RunInputs, subject: RunSubject | None = None) -> dict[str, Any]:
    """What a resume must find unchanged: the eval set (its id, each case's content),
    the config's judging sections (criteria, judge model and options, simulated user) and
    the run's subject (agent, its code, its model, the judges' model)."""
    cases = {
        case.eval_id: _digest(case.model_dump(mode="json")) for case in inputs.eval_set.eval_cases
    }
    judging = inputs.config.model_dump(mode="json", exclude=_OPERATIONAL_CONFIG)
    found: dict[str, Any] = {
        "eval_set_id": inputs.eval_set.eval_set_id,
        "cases": cases,
        "config": {section: _digest(value) for section, value in sorted(judging.items())},
    }
    if subject is not None:
        found["subject"] = subject.as_json()
    return found


def check_resume(
    record: RunRecord,
    inputs: RunInputs,
    options: RunOptions,
    subject: RunSubject | None = None,
) -> None:
    """Refuse (:class:`ResumeMismatch`, one line) to resume ``record``'s folder with an eval
    set, config, runs per case, agent (spec or source), agent model or judge model other
    than those it was started with. A run.json written before fingerprints were recorded
    is checked for runs per case only, one written before subjects were for the rest."""
    folder = record.run_dir
    runs = record.document.get("runs_per_case")
    asked = options.runs or inputs.config.runs
    if isinstance(runs, int) and asked is not None and asked != runs:
        raise ResumeMismatch(
            f"cannot resume {folder}: it runs each case {runs} times, this resume asks for "
            f"{asked} (--runs or the config's runs); resume without changing them, or start "
            "a new run"
        )
    recorded = record.fingerprint
    if recorded is None:
        return
    now = fingerprint(inputs, subject)
    problems: list[str] = []
    before_subject = recorded.get("subject")
    if isinstance(before_subject, Mapping) and subject is not None:
        problems.extend(_subject_changes(before_subject, subject.as_json()))
    if recorded.get("eval_set_id") != now["eval_set_id"]:
        problems.append(
            f"its eval set is {recorded.get('eval_set_id')!r}, not {now['eval_set_id']!r}"
        )
    else:
        problems.extend(_case_changes(recorded.get("cases") or {}, now["cases"]))
    old_config = recorded.get("config") or {}
    changed = sorted(
        section
        for section in set(old_config) | set(now["config"])
        if old_config.get(section) != now["config"].get(section)
    )
    if changed:
        problems.append(f"its config differs in {', '.join(changed)}")
    if problems:
        raise ResumeMismatch(
            f"cannot resume {folder} with these inputs: {'; '.join(problems)}; resume with "
            "the agent, models, eval set and config it was started with, or start a new run"
        )


def _case_changes(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    added = [case for case in now if case not in before]
    removed = [case for case in before if case not in now]
    changed = [case for case in now if case in before and before[case] != now[case]]
    return [
        f"{len(cases)} case{'s' if len(cases) != 1 else ''} {what} ({_some(cases)})"
        for what, cases in (("added", added), ("removed", removed), ("changed", changed))
        if cases
    ]


def _some(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


_SUBJECT_PARTS = (
    ("agent", "its agent"),
    ("agent_model", "its agent model"),
    ("judge_model", "its judge model"),
)


def _subject_changes(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs in what the run measures, each named with both values."""
    problems = [
        f"{label} is {_shown(before.get(key))}, not {_shown(now.get(key))}"
        for key, label in _SUBJECT_PARTS
        if before.get(key) != now.get(key)
    ]
    same_agent = before.get("agent") == now.get("agent")
    if same_agent and before.get("code") and before.get("code") != now.get("code"):
        problems.append(f"its agent's source file changed ({_shown(now.get('agent'))})")
    return problems


def _shown(value: Any) -> str:
    return "none" if value is None else f"'{printable(str(value), keep_newlines=False)}'"


def check_stage_files(paths: RunPaths) -> None:
    """Refuse (:class:`~agentflow_eval.files.limits.UnreadableFile`, one line naming the
    file and line) a resumed folder whose ``trials.jsonl`` or ``judged.jsonl`` holds a
    line past the limits every file is held to, or one that is not a trial (a judged
    trial): the stages would meet it mid-run."""
    for _ in check_records(paths.trials, Trial):
        pass
    for _ in check_records(paths.judged, TrialResult):
        pass
