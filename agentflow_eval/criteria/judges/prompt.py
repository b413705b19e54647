"""Judge prompt templates: loading, versioning, fencing untrusted text, rendering.

A template is jinja2 text (autoescape off, ``StrictUndefined``) that renders to the user
message sent to the judge. Built-in templates live in ``criteria/judges/prompts/<name>.j2`` and
declare a version in a comment, ``{#- version: 3 -#}``; a config's ``prompt_template``
replaces them with inline jinja text or a path to a ``.j2`` file. The template's version
and the sha256 of its source both enter the judge cache key, so editing a template (or
bumping its version) never reuses verdicts given to the old one.

Text written by the agent, the user or a tool is untrusted: templates wrap it with the
``fence`` filter, which puts it between ``<<<BEGIN LABEL id>>>`` / ``<<<END LABEL id>>>``
lines whose ``id`` is derived from the text itself. The text cannot contain its own
closing line (that would need a sha256 preimage), so it cannot break out of the fence,
and the id is deterministic, so the same text renders to the same prompt (and cache key).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta as jinja2_meta

__all__ = [
    "FENCE_PATTERN",
    "PromptTemplate",
    "builtin_template",
    "fence",
    "load_template",
]

_VERSION = re.compile(r"\{#-?\s*version:\s*(?P<version>[^\s#]+)\s*-?#\}")

FENCE_PATTERN = re.compile(
    r"<<<BEGIN (?P<label>[A-Z0-9_]+) (?P<id>[0-9a-f]{12})>>>\n"
    r"(?P<body>.*?)\n?"
    r"<<<END (?P=label) (?P=id)>>>",
    re.DOTALL,
)
"""Matches one fenced block; ``body`` is the fenced text (used by the offline demo judge)."""

_LABEL = re.compile(r"[A-Z0-9_]+")


def fence(text: object, label: str) -> str:
    """``text`` between delimiter lines that it cannot forge (see the module docstring).

    ``label`` names the block in the prompt (``AGENT_RESPONSE``); ``None`` fences as an
    empty block.
    """
    if not _LABEL.fullmatch(label):
        raise ValueError(f"fence label must match [A-Z0-9_]+, got {label!r}")
    body = "" if text is None else str(text)
    block_id = hashlib.sha256(f"{label}\0{body}".encode()).hexdigest()[:12]
    return f"<<<BEGIN {label} {block_id}>>>\n{body}\n<<<END {label} {block_id}>>>"


_ENV = jinja2.Environment(
    autoescape=False,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["fence"] = fence


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt template: where it came from, its version, its source."""

    name: str
    version: str
    source: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def identity(self) -> str:
        """``name@version#sha`` — what the cache key records about the template."""
        return f"{self.name}@{self.version}#{self.sha256[:16]}"

    def check_variables(self, provided: frozenset[str]) -> None:
        """Raise ``ValueError`` when the template uses a variable outside ``provided``
        (the variables its criterion renders it with), so a bad override fails when the
        config is read rather than on every trial."""
        try:
            used = jinja2_meta.find_undeclared_variables(_ENV.parse(self.source))
        except jinja2.TemplateSyntaxError as exc:
            raise ValueError(
                f"judge prompt template {self.name!r} is not valid jinja2 "
                f"(line {exc.lineno}): {exc.message}"
            ) from exc
        unknown = sorted(used - provided)
        if unknown:
            raise ValueError(
                f"judge prompt template {self.name!r} uses {', '.join(unknown)}, which this "
                f"criterion does not provide; available: {', '.join(sorted(provided))}"
            )

    def render(self, **variables: Any) -> str:
        """The prompt for these variables; a variable the template uses but that is not
        given raises ``jinja2.UndefinedError`` naming it."""
        try:
            template = _compile(self.source)
        except jinja2.TemplateSyntaxError as exc:
            raise ValueError(
                f"judge prompt template {self.name!r} is not valid jinja2 "
                f"(line {exc.lineno}): {exc.message}"
            ) from exc
        return template.render(**variables).strip() + "\n"


@lru_cache(maxsize=64)
def _compile(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def _version_of(source: str) -> str | None:
    match = _VERSION.search(source)
    return match.group("version") if match else None


def builtin_template(name: str) -> PromptTemplate:
    """The packaged template ``criteria/judges/prompts/<name>.j2``."""
    resource = resources.files("agentflow_eval.criteria.judges").joinpath("prompts", f"{name}.j2")
    if not resource.is_file():
        raise FileNotFoundError(f"no built-in judge prompt template named {name!r}")
    source = resource.read_text(encoding="utf-8")
    version = _version_of(source)
    if version is None:
        raise ValueError(
            f"built-in judge prompt template {name!r} has no '{{#- version: N -#}}' comment"
        )
    return PromptTemplate(name=name, version=version, source=source)


def load_template(default_name: str, override: str | None = None) -> PromptTemplate:
    """The template a criterion uses: the built-in ``default_name``, or ``override`` from
    the config — a path to a ``.j2`` file, or inline jinja text."""
    if override is None:
        return builtin_template(default_name)
    candidate = override.strip()
    if "\n" not in candidate and candidate.endswith((".j2", ".jinja", ".jinja2")):
        path = Path(candidate).expanduser()
        if not path.is_file():
            raise FileNotFoundError(
                f"prompt_template {override!r} looks like a template file path, "
                "but no such file exists"
            )
        source = path.read_text(encoding="utf-8")
        name = f"{default_name}:{path.name}"
    else:
        source = override
        name = f"{default_name}:inline"
    return PromptTemplate(name=name, version=_version_of(source) or "custom", source=source)
