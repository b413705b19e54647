"""A conversation an agent kept, read as one production trace: a Google ADK session (as
``adk web`` exports it and its session services store it) or an OpenAI-style chat
transcript, read by the readers ``eval-set add --from-session`` uses
(:mod:`agentflow_eval.files.sessions.adk`, :mod:`~agentflow_eval.files.sessions.chat`).

Its id is the session's own (ADK's ``id``, a transcript's ``id``), else a digest of where
it was read; its time is its events' (ADK's ``timestamp``s), else when the object was
written. Its attributes, for sampling, versions and case ids, are the document's plain
fields (ADK's ``app_name`` and ``user_id``, a transcript's ``metadata``) and the
session's state (``state.<key>``); an ADK session's app is its ``service.name``. The
document is kept within the limits and its attributes redacted before it is read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.files.sessions import Conversation, SessionSourceError, adk, chat
from agentflow_eval.redaction import redact, redact_named_data
from agentflow_eval.traces.bounds import Limits, bounded
from agentflow_eval.traces.problem import TraceProblem

__all__ = ["RecordedSession", "session_of"]


@dataclass
class RecordedSession:
    """One kept conversation of an object, read as a trace."""

    trace_id: str
    key: str
    line: int
    conversation: Conversation
    attributes: Mapping[str, Any] = field(default_factory=dict)
    start_ns: int = 0
    end_ns: int = 0
    cut: int = 0
    redacted: int = 0

    def attribute(self, name: str) -> str | None:
        value = self.attributes.get(name)
        return None if value is None or value == "" else str(value)

    def incomplete(self) -> str | None:
        """A kept conversation is whole as the session reader reads it."""
        return None

    @property
    def named(self) -> str:
        return f"{self.key}:{self.line} session {self.trace_id}"


def session_of(
    document: Any, key: str, line: int, limits: Limits, modified_ns: int
) -> RecordedSession | TraceProblem | None:
    """The conversation ``document`` holds, if it is one (``None``: it is not); a
    problem naming it when it looks like one but cannot be read."""
    reader = adk if adk.recognises(document) else chat if chat.recognises(document) else None
    if reader is None:
        return None
    kept = bounded(document, limits)
    try:
        conversation: Conversation = reader.read(kept.value, f"{key}:{line}")
    except SessionSourceError as exc:
        return TraceProblem(key, line, redact(str(exc)).removeprefix(f"{key}:{line}: "))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        reason = redact(str(exc).splitlines()[0]) if str(exc) else type(exc).__name__
        return TraceProblem(key, line, f"not a session the readers take ({reason})"[:240])
    attributes = _attributes(kept.value, reader is adk)
    clean = redact_named_data(attributes)
    stamps = _timestamps(kept.value)
    start = int(min(stamps) * 1e9) if stamps else modified_ns
    end = int(max(stamps) * 1e9) if stamps else modified_ns
    own_id = kept.value.get("id") if isinstance(kept.value, dict) else None
    digest = hashlib.sha256(f"{key}:{line}".encode("utf-8", "surrogatepass")).hexdigest()
    return RecordedSession(
        trace_id=str(own_id) if isinstance(own_id, str | int) and own_id != "" else digest[:32],
        key=key,
        line=line,
        conversation=conversation,
        attributes=clean,
        start_ns=start,
        end_ns=max(start, end),
        cut=kept.cuts,
        redacted=sum(clean[name] != value for name, value in attributes.items()),
    )


_SCALARS = (str, int, float, bool)


def _attributes(document: Any, is_adk: bool) -> dict[str, Any]:
    if not isinstance(document, dict):
        return {}
    found: dict[str, Any] = {
        name: value
        for name, value in document.items()
        if isinstance(value, _SCALARS) and name not in ("events", "messages")
    }
    metadata = document.get("metadata")
    if isinstance(metadata, dict):
        found.update({k: v for k, v in metadata.items() if isinstance(v, _SCALARS)})
    state = document.get("state")
    if isinstance(state, dict):
        found.update({f"state.{k}": v for k, v in state.items() if isinstance(v, _SCALARS)})
    if is_adk:
        app = document.get("app_name", document.get("appName"))
        user = document.get("user_id", document.get("userId"))
        if isinstance(app, str) and app:
            found.setdefault("service.name", app)
            found["app_name"] = app
        if isinstance(user, str) and user:
            found["user_id"] = user
    return found


def _timestamps(document: Any) -> list[float]:
    events = document.get("events") if isinstance(document, dict) else None
    return [
        float(event["timestamp"])
        for event in events or []
        if isinstance(event, dict) and isinstance(event.get("timestamp"), int | float)
    ]
