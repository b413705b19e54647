"""A run's inputs, read and checked before anything runs: the eval set, its config, and
what the run can tell already (a criterion that cannot be built, a case nothing judges,
a judge key that is not set, a scenario without a simulated user).

Bad input raises :class:`~agentflow_eval.files.errors.EvalFileError` naming file, case
and field; what is accepted but not used as written comes back as warnings.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentflow_eval.criteria.config_files import checked_config, load_config
from agentflow_eval.criteria.coverage import unjudged_warnings
from agentflow_eval.criteria.registry import build_criteria, build_criterion, spec_of
from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.files.loading import MAX_FILE_BYTES, find_config_for, load_evalset
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.injection_check import check_injections

__all__ = [
    "RunInputs",
    "check_agent_history",
    "check_agent_mcp",
    "check_agent_needed",
    "check_agent_reach",
    "check_criteria",
    "check_scenarios",
    "criteria_problems",
    "load_inputs",
]


@dataclass(frozen=True)
class RunInputs:
    """A validated eval set and config, with the warnings met while reading them. Made by
    :func:`load_inputs` from files or by :meth:`of` from objects; both check the config's
    criteria against the eval set (:func:`check_criteria`), and the config they hold has
    each criterion's options read by its own model."""

    eval_set: EvalSet
    config: EvalConfig
    warnings: tuple[str, ...] = ()
    config_path: Path | None = None
    evalset_path: Path | None = None

    @classmethod
    def of(cls, eval_set: EvalSet, config: EvalConfig | None = None) -> RunInputs:
        """Inputs from objects; no config means ADK's default criteria."""
        chosen = check_criteria(
            config if config is not None else EvalConfig.default(), None, eval_set
        )
        check_scenarios(eval_set, chosen, f"eval set {eval_set.eval_set_id!r}", None)
        check_injections(eval_set, chosen, f"eval set {eval_set.eval_set_id!r}", None)
        return cls(eval_set, chosen)


def load_inputs(
    evalset: str | Path,
    config: str | Path | EvalConfig | None = None,
    *,
    judge_model: str | None = None,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> RunInputs:
    """Read and check the eval set at ``evalset`` and its config: ``config`` when given
    (a file or a config object), else the ``test_config.json`` beside the eval set, else
    ADK's default criteria. ``judge_model`` replaces the config's run-wide judge model.
    A file larger than ``max_file_bytes`` is refused before it is read.

    Raises :class:`agentflow_eval.files.errors.EvalFileError` naming file, case and field.
    """
    loaded = load_evalset(evalset, max_bytes=max_file_bytes)
    config_path: Path | None = None
    if isinstance(config, EvalConfig):
        run_config = config.model_copy(deep=True)
    else:
        config_path = Path(config) if config else find_config_for(evalset)
        run_config = (
            load_config(config_path, max_bytes=max_file_bytes)
            if config_path
            else EvalConfig.default()
        )
    if judge_model:
        run_config.judge.model = judge_model
    run_config = check_criteria(run_config, config_path, loaded.eval_set, Path(evalset))
    check_scenarios(loaded.eval_set, run_config, evalset, config_path)
    check_injections(loaded.eval_set, run_config, evalset, config_path)
    warnings = (
        *loaded.warnings,
        *run_config.load_warnings,
        *unjudged_warnings(loaded.eval_set, run_config),
    )
    return RunInputs(loaded.eval_set, run_config, warnings, config_path, Path(evalset))


def check_criteria(
    config: EvalConfig,
    config_path: str | Path | None,
    eval_set: EvalSet | None = None,
    evalset_path: str | Path | None = None,
) -> EvalConfig:
    """Check, before any trial runs, that the run can judge what it runs; the config
    with each criterion's options read by its own model.

    Each criterion's options must fit its options model, and the config's criteria are
    built once: options that do not fit, an unknown name or a custom check that does not
    load is an error naming the file and the criterion's field, not a traceback after the
    whole trial phase. Given the eval set, nothing may pass without being checked: an eval
    set without cases, a criterion that needs rubrics with no rubric anywhere (in its
    config, the cases or their turns), and a case that no criterion judges are errors
    too. Every problem is found; the first file with any is raised with all of its."""
    config_file = config_path or "(config)"
    config = checked_config(config, config_file)
    found = criteria_problems(config, config_file, eval_set, evalset_path)
    for where, problems in found.items():
        raise EvalFileError.from_problems(where, problems)
    return config


def criteria_problems(
    config: EvalConfig,
    config_file: str | Path,
    eval_set: EvalSet | None = None,
    evalset_path: str | Path | None = None,
) -> dict[str | Path, list[Problem]]:
    """Every problem :func:`check_criteria` finds, by file (the config first)."""
    evalset_file = evalset_path or "(eval set)"
    found: dict[str | Path, list[Problem]] = {}

    def problem(where: str | Path, message: str, **at: str) -> None:
        found.setdefault(where, []).append(Problem(message=message, **at))

    for name, options in config.criteria.items():
        try:
            build_criterion(name, options, config)
        except ValueError as exc:
            problem(config_file, str(exc), field=f"criteria.{name}")
    judge_key = _judge_key_problem(config)
    if judge_key is not None:
        problem(config_file, judge_key, field="judge.api_key_env")
    if eval_set is None:
        return found
    if not eval_set.eval_cases:
        problem(
            evalset_file,
            f"eval set {eval_set.eval_set_id!r} has no cases: there is nothing to evaluate",
            field="eval_cases",
        )
        return found
    cases_have_rubrics = any(_has_rubrics(case) for case in eval_set.eval_cases)
    for name, options in config.criteria.items():
        spec = spec_of(name)
        if spec is None or not spec.needs_rubrics or options.function:
            continue
        if not getattr(options, "rubrics", None) and not cases_have_rubrics:
            problem(
                config_file,
                f"criterion {name!r} has no rubrics to judge, so it could never pass or "
                "fail: give 'rubrics' in this criterion, in the cases or in their turns, "
                "or remove it",
                field=f"criteria.{name}",
            )
    for case in eval_set.eval_cases:
        try:
            judged = build_criteria(config, case)
        except ValueError:
            continue  # the config's own problem, found above
        if not judged:
            problem(
                evalset_file,
                "no criterion judges this case, so it would pass having checked nothing: "
                f"give the config criteria ({config_file}) or the case expectations",
                case_id=case.eval_id,
            )
    return found


def _judge_key_problem(config: EvalConfig) -> str | None:
    """A judge key variable that is not set would fail every judge call of the run, each
    one "not evaluated": say so before anything runs."""
    name = config.judge.api_key_env
    judged = any(
        (spec := spec_of(criterion)) is not None and spec.calls_judge and not options.function
        for criterion, options in config.criteria.items()
    )
    if judged and name and not os.environ.get(name, "").strip():
        return f"the judge's API key variable {name!r} is not set (or empty) in the environment"
    return None


def _has_rubrics(case: Any) -> bool:
    if getattr(case, "rubrics", None):
        return True
    return any(getattr(turn, "rubrics", None) for turn in getattr(case, "conversation", []))


def check_scenarios(
    eval_set: EvalSet, config: EvalConfig, source: str | Path, config_path: Path | None
) -> None:
    """A simulated-user scenario case cannot run without the config's
    ``user_simulator_config`` (the model that plays the user): refuse it when the inputs
    load, naming each such case, not trial by trial once the run is going."""
    if config.user_simulator_config is not None:
        return
    where = f"config {config_path}" if config_path else "the config (none was given)"
    problems = [
        Problem(
            message=f"a simulated-user scenario needs user_simulator_config in {where}, "
            'e.g. "user_simulator_config": {"model": "openai/gpt-4o-mini"}',
            field="conversation_scenario",
            case_id=case.eval_id,
        )
        for case in eval_set.eval_cases
        if case.conversation_scenario is not None
    ]
    if problems:
        raise EvalFileError.from_problems(source, problems)


def check_agent_reach(agent: object, inputs: RunInputs) -> None:
    """Refuse, in one line, tool mocks an agent cannot honour: an agent whose tools run out
    of our reach (an HTTP agent's run in its own service) says so with
    ``tool_mocks_supported = False``; a mocked call would run the real tool there."""
    if getattr(agent, "tool_mocks_supported", True):
        return
    name = getattr(agent, "name", type(agent).__name__)
    why = f"agent {name!r} runs its tools where no mock can reach them; remove the mocks"
    mocking = [
        case.eval_id
        for case in inputs.eval_set.eval_cases
        if case.tool_mocks
        or case.unmocked_tools == "fail"
        or any(inv.tool_mocks for inv in case.conversation)
    ]
    if mocking:
        more = f" (and {len(mocking) - 1} more cases)" if len(mocking) > 1 else ""
        raise EvalFileError(
            inputs.evalset_path or inputs.eval_set.eval_set_id,
            why + more,
            case_id=mocking[0],
            field="tool_mocks",
        )
    if inputs.config.tool_mocks or inputs.config.unmocked_tools == "fail":
        raise EvalFileError(inputs.config_path or "the config", why, field="tool_mocks")


def check_agent_mcp(agent: object, inputs: RunInputs) -> None:
    """Refuse, in one line, the config's MCP servers for an agent that cannot be given
    their tools: an agent kind that can says so with ``mcp_supported = True`` (the
    built-in LiteLLM agent, a Python function, the Agents SDK's, ADK's and Pydantic AI's
    adapters, a LangGraph graph factory); one that cannot may say what to do instead
    in ``mcp_hint`` (a compiled LangGraph graph)."""
    if not inputs.config.mcp_servers:
        return
    if importlib.util.find_spec("mcp") is None:
        raise EvalFileError(
            inputs.config_path or "the config",
            "MCP servers need the official MCP SDK: pip install 'agentflow-eval[mcp]'",
            field="mcp_servers",
        )
    if getattr(agent, "mcp_supported", False):
        return
    name = getattr(agent, "name", type(agent).__name__)
    hint = getattr(agent, "mcp_hint", None)
    why = (
        f"; {hint}"
        if isinstance(hint, str) and hint
        else " (the LiteLLM agent, a Python function, the Agents SDK, ADK and Pydantic AI "
        "adapters and a LangGraph graph factory can); remove mcp_servers or evaluate one "
        "of those"
    )
    raise EvalFileError(
        inputs.config_path or "the config",
        f"agent {name!r} cannot be given MCP servers' tools{why}",
        field="mcp_servers",
    )


def check_agent_history(agent: object, inputs: RunInputs) -> None:
    """Refuse, in one line, a seeded ``history`` an agent cannot start from: an agent kind
    that cannot take one says so with ``history_supported = False`` (the built-in LiteLLM
    loop, Python and HTTP agents take it; a framework adapter says what it does)."""
    if getattr(agent, "history_supported", True):
        return
    seeded = [case.eval_id for case in inputs.eval_set.eval_cases if case.history]
    if seeded:
        name = getattr(agent, "name", type(agent).__name__)
        more = f" (and {len(seeded) - 1} more cases)" if len(seeded) > 1 else ""
        raise EvalFileError(
            inputs.evalset_path or inputs.eval_set.eval_set_id,
            f"agent {name!r} cannot start from a seeded history; remove it, or evaluate "
            f"another kind of agent{more}",
            case_id=seeded[0],
            field="history",
        )


def check_agent_needed(agent: object | None, inputs: RunInputs) -> None:
    """Without an agent, every case must be a component case: refuse the first that is
    not, in one line."""
    if agent is not None:
        return
    needing = [case.eval_id for case in inputs.eval_set.eval_cases if case.component is None]
    if needing:
        more = f" (and {len(needing) - 1} more cases)" if len(needing) > 1 else ""
        raise EvalFileError(
            inputs.evalset_path or inputs.eval_set.eval_set_id,
            "this case runs an agent, and none was given: name one (agentflow-eval run AGENT "
            f"EVALSET){more}",
            case_id=needing[0],
        )
