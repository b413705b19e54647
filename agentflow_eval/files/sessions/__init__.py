"""Conversations that happened, read from where they were kept, to become eval cases:

- a trial of a run: ``RUN_DIR#case_id/trial_index`` (trial numbers as the run shows them);
- an OpenAI-style chat transcript (a JSON list of messages, or ``{"messages": [...]}``:
  user, assistant with ``tool_calls``, ``tool`` results);
- a Google ADK session file, as ``adk web`` exports it and its session services store it
  (``{"id", "appName", "userId", "state", "events": [...]}``, camelCase or snake_case);
- an OpenTelemetry trace export in OTLP JSON (``{"resourceSpans": [...]}``) of an
  instrumented agent.

Each reader gives a :class:`Conversation`: the turns as a trial records them (user text,
events in order, final answer), and the session's state and input where the source keeps
them. A source that cannot be read raises :class:`SessionSourceError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow_eval.errors import InputError
from agentflow_eval.models.evalset import SessionInput
from agentflow_eval.models.results import Turn

__all__ = ["Conversation", "SessionSourceError", "read_session"]


class SessionSourceError(InputError):
    """A conversation source that cannot be read; the message names it."""


@dataclass
class Conversation:
    """A conversation as a trial records it."""

    turns: list[Turn]
    final_state: dict[str, Any] | None = None
    session_input: SessionInput | None = None
    source: str = ""
    """Where it was read from, for messages and the case's metadata."""
    notes: list[str] = field(default_factory=list)
    """What the reader left out, said once each."""


def read_session(source: str) -> Conversation:
    """The conversation ``source`` names (see the module for the forms)."""
    from agentflow_eval.files.sessions import adk, chat, otlp, run_trial

    if run_trial.names_a_trial(source):
        return run_trial.read(source)
    path = Path(source)
    if not path.is_file():
        raise SessionSourceError(
            f"{source}: no such file; a session is a run's trial (RUN_DIR#case_id/trial), "
            "a chat transcript, an ADK session file or an OTLP JSON trace export"
        )
    from agentflow_eval.files.loading import read_document

    try:
        document = read_document(path)
    except InputError as exc:
        raise SessionSourceError(str(exc)) from None
    for reader in (adk, otlp, chat):
        if reader.recognises(document):
            conversation: Conversation = reader.read(document, source)
            return conversation
    raise SessionSourceError(
        f"{source}: not a conversation this reads: expected a chat transcript (a list of "
        'messages, or {"messages": [...]}), an ADK session ({"events": [...]}) or an OTLP '
        'JSON trace export ({"resourceSpans": [...]})'
    )
