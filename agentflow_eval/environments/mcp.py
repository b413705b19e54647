"""MCP servers started for a trial (or a run), and the tools they serve.

:func:`started_servers` starts every server a config names
(:class:`~agentflow_eval.models.mcp_servers.McpServerSpec`) with the official ``mcp``
SDK — a stdio server as a child process, a streamable-HTTP one by its URL — lists
their tools, and yields them as :class:`McpTool`: a name, a description, a JSON schema
and :meth:`McpTool.call`. Each agent kind offers them to its model as its own tools
(the LiteLLM agent's function tools, an Agents SDK ``FunctionTool``, an ADK tool), and
its calls go through the trial's tool gate like any other tool's, so a mock can answer
one instead.

Why each server lives in a task of its own: the SDK's transports are anyio task groups,
which must be left by the task that entered them; the trial's code is cancelled, timed
out and abandoned in ways a task group does not survive. So one owner task per server
enters the transport and the session, waits to be told to stop, and leaves them; the
callers only send requests through the session's streams. Stopping waits for the owner
whatever happens meanwhile (a cancellation waits too, then goes on), and the SDK stops
a stdio server by closing its stdin, then terminating its process group: no server
process outlives its trial.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

from agentflow_eval.models.mcp_servers import McpServerSpec

__all__ = [
    "McpServerFailed",
    "McpTool",
    "McpToolError",
    "call_error_text",
    "program_of",
    "started_servers",
]

_STDERR_TAIL = 800
"""How much of a server's own error output a failure to start quotes."""


class McpServerFailed(Exception):
    """A server could not be started, or its tools listed (the infrastructure's
    failure, not the agent's)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(f"MCP server {server!r}: {why}")
        self.server = server


class McpToolError(RuntimeError):
    """The server answered a call with an error (``isError``): to the agent, the tool
    failed with this message."""


@dataclass(frozen=True, eq=False)
class McpTool:
    """One tool a started server serves."""

    server: str
    """The config's name of the server."""
    name: str
    description: str
    input_schema: Mapping[str, Any]
    _session: Any = field(repr=False)

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool definition the model sees."""
        function: dict[str, Any] = {"name": self.name, "parameters": dict(self.input_schema)}
        if self.description:
            function["description"] = self.description
        return {"type": "function", "function": function}

    async def call(self, args: Mapping[str, Any]) -> Any:
        """The tool's result: its structured content when it gives any (a bare value an
        SDK server wrapped as ``{"result": ...}`` unwrapped), else its text. Raises
        :class:`McpToolError` when the server says the call failed."""
        result = await self._session.call_tool(self.name, dict(args))
        text = "\n".join(_block_text(block) for block in result.content)
        if result.is_error:
            raise McpToolError(text or f"{self.name} failed")
        structured = result.structured_content
        if structured is None:
            return text
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]
        return structured


_THIS_PYTHON = frozenset({"python", "python3"})


def program_of(command: str) -> str:
    """The program a stdio server's command starts: ``python`` (or ``python3``) is the
    interpreter running the evaluation, whose packages the server's code was written
    against, not whichever one comes first on ``PATH`` (a virtualenv used without being
    activated is the common case)."""
    return sys.executable if command in _THIS_PYTHON and sys.executable else command


def call_error_text(exc: Exception) -> str:
    """What the model is told of a failed MCP call: the server's own message, else the
    exception (a protocol error, a server that went away) with its type."""
    if isinstance(exc, McpToolError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    kind = getattr(block, "type", "content")
    mime = getattr(block, "mime_type", None)
    return f"[{kind}{': ' + mime if mime else ''}]"


class _Server:
    """One server, held open by its owner task until :meth:`stop`."""

    def __init__(self, spec: McpServerSpec, variables: Mapping[str, str]) -> None:
        self.spec = spec
        self.variables = variables
        self.tools: list[McpTool] = []
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stopping = asyncio.Event()
        self._stderr: TextIO | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._own(), name=f"mcp-server-{self.spec.name}")
        try:
            async with asyncio.timeout(self.spec.startup_timeout_s):
                await asyncio.shield(self._ready)
        except TimeoutError:
            raise McpServerFailed(
                self.spec.name,
                f"it did not start and list its tools within {self.spec.startup_timeout_s:g} s"
                + self._stderr_tail(),
            ) from None

    async def _own(self) -> None:
        # a stdio server's own error output goes to a file: quoted when it fails to
        # start, and never mixed into the run's terminal output
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
            self._stderr = cast(TextIO, stderr)
            try:
                async with contextlib.AsyncExitStack() as stack:
                    session = await self._connect(stack)
                    self.tools = [
                        McpTool(
                            server=self.spec.name,
                            name=tool.name,
                            description=tool.description or "",
                            input_schema=dict(tool.input_schema or {"type": "object"}),
                            _session=session,
                        )
                        for tool in await _all_tools(session)
                    ]
                    self._ready.set_result(None)
                    await self._stopping.wait()
            except BaseException as exc:  # handed to whoever waits for the start
                if not self._ready.done():
                    cause = _first_leaf(exc)
                    why = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
                    self._ready.set_exception(
                        McpServerFailed(
                            self.spec.name, f"it did not start: {why}{self._stderr_tail()}"
                        )
                    )
                if not isinstance(exc, Exception):
                    raise
            finally:
                self._stderr = None

    async def _connect(self, stack: contextlib.AsyncExitStack) -> Any:
        # imported here: a run without MCP servers never loads the SDK (and its HTTP stack)
        from mcp import ClientSession

        spec = self.spec
        if spec.command is not None:
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=program_of(spec.command[0]),
                args=spec.command[1:],
                env={**self.variables, **spec.env},
                cwd=spec.cwd,
            )
            assert self._stderr is not None
            read, write = await stack.enter_async_context(stdio_client(params, self._stderr))
        else:
            from mcp.client.streamable_http import streamable_http_client

            assert spec.url is not None
            read, write = await stack.enter_async_context(streamable_http_client(spec.url))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - _STDERR_TAIL * 4))
            tail = self._stderr.read().strip()[-_STDERR_TAIL:]
            if tail:
                return f"; its error output ends: {tail}"
        return ""

    async def stop(self) -> None:
        """Stop the server and wait for it, through any cancellation of the caller
        (re-raised once the server is gone)."""
        self._stopping.set()
        task = self._task
        if task is None:
            return
        if not self._ready.done() or self._ready.exception() is not None:
            task.cancel()  # still starting (cut off at its timeout): the SDK stops the process
        cancelled = False
        while not task.done():
            try:
                await asyncio.wait([task])
            except asyncio.CancelledError:
                cancelled = True  # the server goes first: a process must not be left behind
        # retrieved: a failure to start was reported by start(), or cut off at its bound
        if self._ready.done():
            self._ready.exception()
        if cancelled:
            raise asyncio.CancelledError


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception an exception group holds (the SDK's task groups wrap what
    failed in one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _all_tools(session: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


@contextlib.asynccontextmanager
async def started_servers(
    specs: Sequence[McpServerSpec], *, variables: Mapping[str, str] | None = None
) -> AsyncIterator[tuple[McpTool, ...]]:
    """Start ``specs`` (stdio servers with ``variables`` in their environment, under
    each spec's own ``env``) and yield their tools; stop them all on the way out,
    however it is left. Raises :class:`McpServerFailed` when one does not start, or two
    serve a tool of the same name."""
    servers = [_Server(spec, variables or {}) for spec in specs]
    try:
        # at once: each start is mostly a process importing its SDK, waiting on no other
        await asyncio.gather(*(server.start() for server in servers))
        yield _distinct(servers)
    finally:
        await _stop_all(servers)


def _distinct(servers: Sequence[_Server]) -> tuple[McpTool, ...]:
    seen: dict[str, str] = {}
    for server in servers:
        for tool in server.tools:
            if tool.name in seen:
                raise McpServerFailed(
                    server.spec.name,
                    f"its tool {tool.name!r} has the name of a tool of server "
                    f"{seen[tool.name]!r}; an agent's tools need distinct names",
                )
            seen[tool.name] = server.spec.name
    return tuple(tool for server in servers for tool in server.tools)


async def _stop_all(servers: Sequence[_Server]) -> None:
    """Stop every server (at once: each stdio server may take its grace to exit),
    through a cancellation, which goes on once all are stopped."""
    stopping = asyncio.gather(*(server.stop() for server in servers), return_exceptions=True)
    cancelled = False
    while not stopping.done():
        try:
            await asyncio.wait([stopping])
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
