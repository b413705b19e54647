"""Eval sets written, not only read: a new empty eval set file, and a case made from a
conversation that happened (:mod:`agentflow_eval.files.sessions`) appended to one.

A case built from a conversation expects what the conversation did, as chosen by
``expect`` (``tools``, ``nodes``, ``answer``, ``state``): its turns' user messages, their
tool calls (with the arguments the agent passed), the steps it took, its answers as
reference answers, the session's final state; and it starts where the session started
(``session_input``) when the source says. The file keeps its format (JSON or YAML, by its
extension) and is replaced whole, never half written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.loading import load_evalset, read_document
from agentflow_eval.files.sessions import Conversation
from agentflow_eval.models.evalset import EvalCase, EvalSet, Invocation, Message, ToolCall

__all__ = [
    "EXPECTATIONS",
    "Expectation",
    "add_case",
    "case_from_conversation",
    "create_evalset",
    "write_document",
]

Expectation = Literal["tools", "nodes", "answer", "state"]
EXPECTATIONS: tuple[Expectation, ...] = get_args(Expectation)


def write_document(path: Path, data: Any) -> Path:
    """``data`` written to ``path`` as JSON or YAML, by its extension."""
    if path.suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return write_text_atomically(path, [text])


def create_evalset(path: Path, *, eval_set_id: str | None = None, name: str = "") -> EvalSet:
    """A new eval set without cases at ``path`` (refused when the file exists); its id is
    ``eval_set_id``, else the file's stem."""
    if path.exists():
        raise EvalFileError(path, "already exists; add cases to it with eval-set add")
    if path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise EvalFileError(
            path, f"unsupported file type {path.suffix or '(none)'!r}; expected .json or .yaml"
        )
    stem = path.name.split(".")[0]
    eval_set = EvalSet(eval_set_id=eval_set_id or stem, name=name, eval_cases=[])
    write_document(path, _native(eval_set))
    return eval_set


def _native(eval_set: EvalSet) -> dict[str, Any]:
    data: dict[str, Any] = {"eval_set_id": eval_set.eval_set_id}
    if eval_set.name:
        data["name"] = eval_set.name
    if eval_set.description:
        data["description"] = eval_set.description
    data["eval_cases"] = [case_data(case) for case in eval_set.eval_cases]
    return data


def case_data(case: EvalCase) -> dict[str, Any]:
    """A case in the native format, with the fields it was given; a message that is one
    text is written as that text, as a person would write it."""
    data: dict[str, Any] = case.model_dump(mode="json", exclude_unset=True, exclude_none=True)
    if case.component is not None:
        # what the case stands for (its turn, its output_matches, the last expectation)
        # was not written by its author
        data.pop("conversation", None)
        if "expectations" in data:
            data["expectations"] = data["expectations"][:-1]
        if "input" in case.model_fields_set and case.input is None:
            data["input"] = None  # a null input is the input, not a field left out
        if case.expected_output is None:
            data["expected_output"] = None
    for turn in data.get("conversation", []):
        for key in ("user_content", "expected_final_response"):
            if key in turn:
                turn[key] = _plain(turn[key])
    return data


def _plain(message: Any) -> Any:
    parts = message.get("content") if isinstance(message, dict) else None
    if (
        isinstance(parts, list)
        and len(parts) == 1
        and set(message) <= {"role", "content"}
        and set(parts[0]) == {"type", "text"}
        and parts[0]["type"] == "text"
    ):
        return parts[0]["text"]
    return message


def _tool_call(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name=name, args=args)


def case_from_conversation(
    conversation: Conversation, case_id: str, expect: Iterable[Expectation] = EXPECTATIONS
) -> EvalCase:
    """The eval case ``conversation`` makes, expecting what it did (see the module)."""
    chosen = set(expect)
    unknown = chosen - set(EXPECTATIONS)
    if unknown:
        raise ValueError(
            f"--expect: unknown {', '.join(sorted(unknown))}; expected any of "
            f"{', '.join(EXPECTATIONS)}"
        )
    turns = []
    for number, turn in enumerate(conversation.turns, 1):
        fields: dict[str, Any] = {
            "invocation_id": f"{case_id}-{number}",
            "user_content": Message.model_validate(turn.user_text),
        }
        if "tools" in chosen:
            fields["expected_tool_trajectory"] = [
                _tool_call(call.name, dict(call.args)) for call in turn.tool_calls
            ]
        if "nodes" in chosen and turn.nodes:
            fields["expected_nodes"] = [
                "/".join([*node.path, node.name]) if node.path else node.name for node in turn.nodes
            ]
        if "answer" in chosen and turn.final_response:
            fields["expected_final_response"] = Message(
                role="assistant", content=[{"type": "text", "text": turn.final_response}]
            )
        turns.append(Invocation.model_validate(fields))
    case_fields: dict[str, Any] = {"eval_id": case_id, "conversation": turns}
    if conversation.session_input is not None:
        case_fields["session_input"] = conversation.session_input
    if "state" in chosen and conversation.final_state:
        case_fields["final_session_state"] = conversation.final_state
    if conversation.source:
        case_fields["metadata"] = {"from_session": conversation.source}
    return EvalCase.model_validate(case_fields)


def add_case(path: Path, case: EvalCase) -> EvalSet:
    """Append ``case`` to the eval set file at ``path`` (refused when it has a case with
    that id); returns the eval set as it now reads."""
    loaded = load_evalset(path).eval_set  # the file must be a valid eval set first
    if any(existing.eval_id == case.eval_id for existing in loaded.eval_cases):
        raise EvalFileError(
            path,
            f"already has a case with id {case.eval_id!r}; give another with --case-id",
            case_id=case.eval_id,
            field="eval_id",
        )
    document = read_document(path)
    if not isinstance(document, dict):
        raise EvalFileError(path, "is a list of cases (an ADK legacy file); convert it first")
    cases_key = "evalCases" if "evalCases" in document else "eval_cases"
    document.setdefault(cases_key, []).append(case_data(case))
    write_document(path, document)
    return load_evalset(path).eval_set
