"""A note-taking agent with two tools, ``session_note_append`` and ``add``.

``agent`` is scripted (:func:`respond`): plain Python rules that answer the three requests of
``notes.evalset.json`` the way a correct tool-using agent does (it greets without tools,
saves a note with ``session_note_append``, and adds numbers with ``add`` before giving the
sum), reporting each tool call to the evaluator. It needs no model and no key::

    agentflow-eval run examples.notes.agent examples/notes/notes.evalset.json

``llm_agent`` offers the same tools to a real model (``AGENTFLOW_EXAMPLE_MODEL``, default
``openai/gpt-4o-mini``), to measure how reliably a model does what the script does::

    agentflow-eval run examples.notes.agent:llm_agent examples/notes/notes.evalset.json

The note tool writes only into the running trial's own directory
(:func:`~agentflow_eval.agents.base.trial_workdir`) and the session's state, never into
the project.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from agentflow_eval.agents.base import TrajectoryRecorder, trial_workdir
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent

__all__ = [
    "NOTES_FILE",
    "SYSTEM_PROMPT",
    "add",
    "agent",
    "llm_agent",
    "respond",
    "session_note_append",
]

NOTES_FILE = "notes.txt"


def session_note_append(note: str, workdir: Path, state: dict[str, Any]) -> dict[str, Any]:
    """Remember a note for the rest of this session.

    Args:
        note: The text to remember, e.g. "buy milk".
    """
    with (workdir / NOTES_FILE).open("a", encoding="utf-8") as notes:
        notes.write(note + "\n")
    saved = state.setdefault("notes", [])
    saved.append(note)
    return {"saved": note, "notes_in_session": len(saved)}


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    total = a + b
    return int(total) if float(total).is_integer() else total


# --------------------------------------------------------------------- the scripted agent

_NOTE = re.compile(r"(?:note|remember)\b[^:]*:\s*(?P<note>.+?)\s*\.?\s*$", re.IGNORECASE)
_SUM = re.compile(
    r"(?P<a>-?\d+(?:\.\d+)?)\s*(?:\+|plus|and)\s*(?P<b>-?\d+(?:\.\d+)?)", re.IGNORECASE
)


def _number(text: str) -> float:
    value = float(text)
    return int(value) if value.is_integer() else value


def respond(message: str, recorder: TrajectoryRecorder, state: dict[str, Any]) -> str:
    """Answer one user turn by rule, calling (and reporting) a tool where the request
    needs one."""
    if note := _NOTE.search(message):
        text = note.group("note")
        with recorder.tool("session_note_append", {"note": text}) as call:
            call.result = session_note_append(text, trial_workdir(), state)
        return f"Saved your note: {text}."
    if numbers := _SUM.search(message):
        a, b = _number(numbers.group("a")), _number(numbers.group("b"))
        with recorder.tool("add", {"a": a, "b": b}) as call:
            call.result = add(a, b)
        return f"{a} plus {b} is {call.result}."
    return "Hi there, nice to meet you!"


agent = PythonAgent(respond, name="notes_agent")


# ------------------------------------------------------------------- the same on a model

SYSTEM_PROMPT = (
    "You are a helpful assistant with two tools. When the user asks you to remember or note "
    "something, call session_note_append with the note text. When the user asks for "
    "arithmetic, call add and then state the number. Otherwise answer briefly without tools."
)

llm_agent = LiteLLMAgent(
    model=os.environ.get("AGENTFLOW_EXAMPLE_MODEL", "openai/gpt-4o-mini"),
    system_prompt=SYSTEM_PROMPT,
    tools=[session_note_append, add],
    name="notes_llm_agent",
)
