"""MCP servers as a config names them: each one's tools are given to the agent.

A server is started as a local process speaking MCP over stdio (``command``), or reached
at a streamable-HTTP URL (``url``)::

    "mcp_servers": [
      {"name": "orders", "command": ["python", "orders_server.py"]},
      {"name": "search", "url": "http://127.0.0.1:8931/mcp", "scope": "run"}
    ]

Each trial starts its own (``scope: "trial"``, the default), so what one trial's calls
change is never seen by another; a server that keeps no state between calls may say
``scope: "run"`` and be started once for the whole run.
"""

from __future__ import annotations

import shlex
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from agentflow_eval.models.file_model import FileModel

__all__ = ["McpScope", "McpServerSpec"]

McpScope = Literal["trial", "run"]
"""Started for each trial (fresh state), or once for the run (a stateless server)."""


class McpServerSpec(FileModel):
    """One MCP server whose tools the agent gets (see the module)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """What the run calls it: in errors, and in each of its tools' ``server``."""
    command: list[str] | None = None
    """The program and its arguments, started for a stdio server (a string is split as a
    shell would, without running one). ``python`` or ``python3`` as the program is the
    interpreter running the evaluation."""
    url: str | None = None
    """A streamable-HTTP server's endpoint (``http://`` or ``https://``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables a stdio server is started with, over the trial environment's
    ``variables`` and the MCP SDK's safe defaults (``PATH``, ``HOME``, ...)."""
    cwd: str | None = None
    """The directory a stdio server starts in (default: the current one)."""
    scope: McpScope = "trial"
    """``trial``: each trial starts its own; ``run``: one for the run's trials, for a
    server that keeps no state between calls."""
    startup_timeout_s: float = Field(default=30.0, gt=0)
    """How long starting it and listing its tools may take."""

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value

    @field_validator("command")
    @classmethod
    def _program(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not value[0].strip()):
            raise ValueError("give the program to start, e.g. ['python', 'server.py']")
        return value

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("not an http:// or https:// URL")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.name!r}: give one of command (a stdio server) or url "
                "(a streamable-HTTP server)"
            )
        if self.url is not None and (self.env or self.cwd is not None):
            raise ValueError(
                f"MCP server {self.name!r}: env and cwd are for a started (command) server"
            )
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"
