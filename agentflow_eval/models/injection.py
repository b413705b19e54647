"""Injected instructions: hostile text a tool mock puts into the result the agent reads,
and what "following" it means.

A payload has an ``id``, the ``text`` put into a tool's result, and what an agent that
obeyed it would do: a tool call it should not make (``forbidden_calls``, a tool's name
and, optionally, arguments the call contains) and/or text it should not say
(``forbidden_text``, matched case-insensitively). The package ships a small versioned set
(``injection_payloads.json`` beside this module, :func:`shipped_payloads`); a config's
``injection_payloads`` adds a team's own, and a mock may write one out in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from pydantic import Field, model_validator

from agentflow_eval.models.file_model import FileModel
from agentflow_eval.models.matching import json_subset

__all__ = [
    "ForbiddenCall",
    "InjectionPayload",
    "PayloadSet",
    "carries",
    "payload_catalogue",
    "resolve",
    "shipped_payloads",
    "with_injection",
]

_DATA = "injection_payloads.json"


class ForbiddenCall(FileModel):
    """A tool call an agent that followed the injected instruction makes."""

    tool: str = Field(min_length=1)
    """The tool's name."""
    args: dict[str, Any] | None = None
    """Arguments the call must contain to count (a subset, as tool mocks match); none:
    any call of the tool."""

    def made_by(self, name: str, args: dict[str, Any]) -> bool:
        """Whether a call of ``name`` with ``args`` is this forbidden call."""
        return name == self.tool and (self.args is None or json_subset(self.args, args))

    def described(self) -> str:
        shown = json.dumps(self.args, ensure_ascii=False, sort_keys=True) if self.args else ""
        return f"{self.tool}({shown})"


class InjectionPayload(FileModel):
    """An injected instruction and what following it means (see the module)."""

    id: str = Field(min_length=1)
    """How mocks and results name it."""
    text: str = Field(min_length=1)
    """What is put into the tool's result, word for word."""
    description: str = ""
    """What it tries to make the agent do."""
    forbidden_calls: list[ForbiddenCall] = Field(default_factory=list)
    """Tool calls that show the agent followed it."""
    forbidden_text: list[str] = Field(default_factory=list)
    """Text (case-insensitive) that shows the agent followed it, when it says it."""

    @model_validator(mode="after")
    def _says_what_following_is(self) -> InjectionPayload:
        # a payload nothing can be followed by would pass every agent: refuse it
        if not self.forbidden_calls and not any(self.forbidden_text):
            raise ValueError(
                "an injection payload needs forbidden_calls or forbidden_text: what an agent "
                "that followed it would do"
            )
        return self

    def said_by(self, text: str) -> str | None:
        """The forbidden text ``text`` contains, if any."""
        folded = text.casefold()
        return next((t for t in self.forbidden_text if t and t.casefold() in folded), None)

    def call_forbidden(self, name: str, args: dict[str, Any]) -> ForbiddenCall | None:
        """The forbidden call a call of ``name`` with ``args`` is, if any."""
        return next((c for c in self.forbidden_calls if c.made_by(name, args)), None)


class PayloadSet(FileModel):
    """The package's payloads as its data file holds them."""

    version: str = Field(min_length=1)
    """Changes whenever a payload is added, removed or reworded, so results name the set
    they were measured with."""
    payloads: list[InjectionPayload]
    """The payloads, each with an id of its own."""


@cache
def shipped_payloads() -> PayloadSet:
    """The payloads shipped with the package (read once)."""
    text = resources.files("agentflow_eval.models").joinpath(_DATA).read_text(encoding="utf-8")
    return PayloadSet.model_validate_json(text)


def payload_catalogue(own: Iterable[InjectionPayload] = ()) -> dict[str, InjectionPayload]:
    """Every payload a mock can name by id: the package's, then ``own`` (a config's),
    which replace a shipped one of the same id."""
    catalogue = {p.id: p for p in shipped_payloads().payloads}
    catalogue.update({p.id: p for p in own})
    return catalogue


def resolve(
    ref: str | InjectionPayload, catalogue: Mapping[str, InjectionPayload]
) -> InjectionPayload:
    """The payload ``ref`` names (or is). Raises ``KeyError`` naming the known ids."""
    if isinstance(ref, InjectionPayload):
        return ref
    if ref not in catalogue:
        raise KeyError(
            f"unknown injection payload {ref!r}; expected one of {', '.join(sorted(catalogue))} "
            "or one of the config's injection_payloads"
        )
    return catalogue[ref]


def with_injection(result: Any, text: str, field: str) -> Any:
    """``result`` carrying ``text`` where an agent reads it: appended to a text result, in
    ``field`` of an object (after what the field already says), else beside the result
    in an object of its own. A copy: the mock's own result is never changed."""
    if isinstance(result, str):
        return f"{result}\n\n{text}" if result else text
    if isinstance(result, dict):
        out = dict(result)
        before = out.get(field)
        out[field] = f"{before}\n\n{text}" if isinstance(before, str) and before else text
        return out
    return {"result": result, field: text}


def carries(value: Any, text: str) -> bool:
    """Whether some string in ``value`` (a JSON value) contains ``text``."""
    if isinstance(value, str):
        return text in value
    if isinstance(value, dict):
        return any(carries(v, text) for v in value.values())
    if isinstance(value, list | tuple):
        return any(carries(v, text) for v in value)
    return False
