"""``agentflow-eval eval-set``: eval sets made and kept without running anything.

    eval-set create FILE [--name NAME] [--id ID]      a new, empty eval set (JSON or YAML)
    eval-set add FILE --from-session SOURCE [--case-id ID] [--expect tools,nodes,answer,state]
                                                      a case from a conversation that happened
                                                      (by default expecting what the criteria
                                                      judge)
    eval-set validate FILE... [--config CONFIG]       every problem of eval sets and configs
    eval-set convert FILE --to native|adk [-o OUT]    between the native format and ADK's

A SOURCE is a run's trial (``RUN_DIR#case_id/trial``, trials numbered from 1 as the
reports show them), an OpenAI-style chat transcript, a Google ADK session file or an OTLP
JSON trace export. Bad input is one line and exit 2, with nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_BAD_INPUT, EXIT_OK, fail, terminal_text
from agentflow_eval.criteria.config_files import checked_config, load_config
from agentflow_eval.criteria.coverage import EXPECTATION_FIELD, judge_hint, judged_expectations
from agentflow_eval.errors import InputError
from agentflow_eval.files.authoring import (
    EXPECTATIONS,
    Expectation,
    add_case,
    case_from_conversation,
    create_evalset,
    write_document,
)
from agentflow_eval.files.convert import convert
from agentflow_eval.files.loading import find_config_for, load_evalset
from agentflow_eval.files.overwriting import check_overwrite
from agentflow_eval.files.sessions import read_session
from agentflow_eval.models.config import EvalConfig
from agentflow_eval.models.evalset import EvalCase
from agentflow_eval.run.validation import validate_files

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "eval-set",
        help="create, grow, check and convert eval sets",
        description="Eval sets made and kept without running anything: create one, add a "
        "case from a conversation that happened, check files for every problem, convert "
        "between the native format and Google ADK's.",
    )
    actions = parser.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="create, add, validate or convert"
    )

    create = actions.add_parser(
        "create",
        help="a new, empty eval set",
        description="Write a new eval set with no cases to FILE (JSON or YAML, by its "
        "extension); grow it with 'eval-set add'. An existing file is never overwritten.",
    )
    create.add_argument("file", metavar="FILE", help="the eval set file to make (.json or .yaml)")
    create.add_argument("--name", default="", help="the eval set's name, shown in reports")
    create.add_argument("--id", dest="eval_set_id", help="its id (default: the file's stem)")

    add = actions.add_parser(
        "add",
        help="append a case made from a conversation that happened",
        description="Append a case to FILE that expects what a conversation did: its user "
        "messages as the turns, and of its tool calls, steps, answers and final session "
        "state, those the criteria judge (--expect chooses others).",
    )
    add.add_argument("file", metavar="FILE", help="the eval set file to add to")
    add.add_argument(
        "--from-session",
        required=True,
        metavar="SOURCE",
        help="RUN_DIR#case_id/trial (a run's trial, numbered from 1), a chat transcript "
        "(.json), an ADK session file, or an OTLP JSON trace export",
    )
    add.add_argument("--case-id", metavar="ID", help="the new case's id (default: session-N)")
    add.add_argument(
        "--expect",
        metavar="LIST",
        help="what the case expects, of tools, nodes, answer, state (default: what the "
        "criteria judge — the test_config.json beside FILE, else the default criteria: "
        "tools and answer — saying what else the session has)",
    )

    validate = actions.add_parser(
        "validate",
        help="check eval sets and configs for every problem",
        description="Check eval sets and configs without running anything. Every problem is "
        "listed, one line each naming file, case and field; exit 2 if there is any, else 0 "
        "with a line per file. What a run would warn of and run anyway (an expectation no "
        "criterion of the config, or of the default criteria, judges) follows as warnings.",
    )
    validate.add_argument("files", nargs="+", metavar="FILE", help="eval sets and configs")
    validate.add_argument(
        "--config", metavar="CONFIG", help="judge the eval sets with this config instead"
    )

    convert = actions.add_parser(
        "convert",
        help="convert between the native format and Google ADK's",
        description="Write FILE in the other format. What the target cannot hold is said in "
        "one line each; everything else goes across.",
    )
    convert.add_argument("file", metavar="FILE", help="the eval set to convert")
    convert.add_argument("--to", required=True, choices=["native", "adk"], help="the format")
    convert.add_argument(
        "-o", "--output", metavar="OUT", help="where to write it (default: standard output)"
    )
    convert.add_argument(
        "--force", action="store_true", help="write over OUT when it exists (refused without)"
    )


def run(args: argparse.Namespace) -> int:
    try:
        handler = {
            "create": _create,
            "add": _add,
            "validate": _validate,
            "convert": _convert,
        }[args.action]
        return handler(args)
    except InputError as exc:
        return fail(str(exc))
    except (OSError, ValueError) as exc:
        return fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def _create(args: argparse.Namespace) -> int:
    made = create_evalset(Path(args.file), eval_set_id=args.eval_set_id, name=args.name)
    print(terminal_text(f"created {args.file}: eval set {made.eval_set_id!r}, no cases yet"))
    return EXIT_OK


def _add(args: argparse.Namespace) -> int:
    path = Path(args.file)
    before = load_evalset(path).eval_set  # a file that is no eval set fails before the read
    conversation = read_session(args.from_session)
    case_id = args.case_id or f"session-{len(before.eval_cases) + 1}"
    left_out: list[str] = []
    if args.expect is None:
        config_path = find_config_for(path)
        config = checked_config(load_config(config_path)) if config_path else EvalConfig.default()
        judged_by = config_path.name if config_path else "the default criteria"
        full = case_from_conversation(conversation, case_id)
        expect, unjudged = judged_expectations(full, config)
        left_out = [_left_out(full, e, judged_by) for e in unjudged]
    else:
        expect = [part.strip() for part in args.expect.split(",") if part.strip()]
    case = case_from_conversation(conversation, case_id, expect)
    add_case(path, case)
    turns = case.conversation
    calls = sum(len(turn.expected_tool_trajectory) for turn in turns)
    steps = sum(len(turn.expected_nodes) for turn in turns)
    answers = sum(turn.expected_final_response is not None for turn in turns)
    parts = [f"{len(turns)} turn(s)", f"{calls} tool call(s)"]
    if steps:
        parts.append(f"{steps} step(s)")
    parts.append(f"{answers} reference answer(s)")
    if case.final_session_state:
        parts.append(f"final state with {len(case.final_session_state)} key(s)")
    print(terminal_text(f"added case {case_id!r} to {path}: {', '.join(parts)}"))
    for note in [*conversation.notes, *left_out]:
        print(terminal_text(f"note: {note}"), file=sys.stderr)
    if left_out:
        every = ",".join(EXPECTATIONS)
        print(
            terminal_text(f"note: --expect {every} writes them too (with criteria to judge them)"),
            file=sys.stderr,
        )
    return EXIT_OK


def _left_out(case: EvalCase, expectation: Expectation, judged_by: str) -> str:
    """``not written: the session's 3 step(s) (expected_nodes), which nothing in the
    default criteria judges (add node_trajectory_avg_score to the config's criteria)``."""
    field = EXPECTATION_FIELD[expectation]
    return (
        f"not written: the session's {_held(case, expectation)} ({field}), which nothing in "
        f"{judged_by} judges ({judge_hint(field)})"
    )


def _held(case: EvalCase, expectation: Expectation) -> str:
    """How much of ``expectation`` a case holds, in words."""
    turns = case.conversation
    if expectation == "tools":
        return f"{sum(len(t.expected_tool_trajectory) for t in turns)} tool call(s)"
    if expectation == "nodes":
        return f"{sum(len(t.expected_nodes) for t in turns)} step(s)"
    if expectation == "answer":
        return f"{sum(t.expected_final_response is not None for t in turns)} answer(s)"
    return f"final state with {len(case.final_session_state or {})} key(s)"


def _validate(args: argparse.Namespace) -> int:
    checks = validate_files(args.files, config=args.config)
    bad = False
    for check in checks:
        bad = bad or bool(check.problems)
        stream = sys.stderr if check.problems else sys.stdout
        for line in check.lines():
            print(terminal_text(line), file=stream)
        for line in check.warning_lines():
            print(terminal_text(line), file=sys.stderr)
    return EXIT_BAD_INPUT if bad else EXIT_OK


def _convert(args: argparse.Namespace) -> int:
    import json

    if args.output:  # an eval set is no run's output: anything there is refused
        check_overwrite(Path(args.output), None, force=args.force)
    eval_set = load_evalset(args.file).eval_set
    data, lost = convert(eval_set, args.to)
    for line in lost:
        print(terminal_text(f"note: {line}"), file=sys.stderr)
    if args.output:
        write_document(Path(args.output), data)
        written = len(data.get("eval_cases", []))
        print(terminal_text(f"wrote {args.output} ({args.to}, {written} cases)"))
    else:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    return EXIT_OK
