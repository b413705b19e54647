"""The offline demo model behind an OpenAI-compatible HTTP endpoint on 127.0.0.1, for agents
whose framework calls a chat-completions URL itself (LangGraph's ``ChatOpenAI``, the Agents
SDK's ``AsyncOpenAI``, Pydantic AI's ``OpenAIProvider``): point the framework's base URL at
it and the agent runs offline, as ``agentflow-demo/*`` runs the built-in agents::

    with DemoServer() as server:
        model = ChatOpenAI(model="weather", base_url=server.url, api_key="offline")

A request is answered as the demo model answers a call (see :mod:`agentflow_eval.demo.model`):
seeded by the request's ``seed`` and the conversation. Whatever model name the client
sends, the reply names the demo model as the one that answered
(:func:`~agentflow_eval.demo.names.answering_model`), so the calls a framework records
from it mark the run simulated and are priced unknown. A framework's own client does not say
which trial it calls for, so every trial of a case gets the same answers here; through
LiteLLM (``agentflow-demo/*``, tagged by the run's model client) trials differ.

``python -m agentflow_eval.demo.server`` serves it until stopped and prints its URL.
"""

from __future__ import annotations

import argparse
import json
import threading
from typing import Any

from agentflow_eval.demo.model import DemoModel, DemoRequest, token_counts
from agentflow_eval.demo.names import answering_model
from agentflow_eval.testing.openai_server import Reply, ScriptedOpenAIServer

__all__ = ["DemoServer", "demo_reply", "shared_demo_url"]


def demo_reply(body: dict[str, Any]) -> Reply:
    """The demo model's answer to one chat-completions request body."""
    seed = body.get("seed")
    request = DemoRequest(
        model=str(body.get("model") or "demo"),
        messages=[m for m in body.get("messages") or [] if isinstance(m, dict)],
        tools=list(body.get("tools") or []),
        seed=int(seed) if isinstance(seed, int | float) else 0,
    )
    reply = DemoModel().reply(request)
    prompt_tokens, completion_tokens = token_counts(request, reply)
    return Reply(
        content=reply.content,
        tool_calls=[{"name": name, "arguments": args} for name, args in reply.tool_calls] or None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=answering_model(request.model),
    )


class DemoServer(ScriptedOpenAIServer):
    """An OpenAI-compatible server answering with the demo model (``url`` ends in
    ``/v1``). Requests are not kept: it may serve a long run."""

    def __init__(self, *, latency_s: float = 0.0, port: int = 0) -> None:
        super().__init__(handler=demo_reply, latency_s=latency_s, port=port, keep_requests=False)


_shared: DemoServer | None = None
_shared_lock = threading.Lock()


def shared_demo_url() -> str:
    """The URL of this process's demo server, started on first use and kept for the
    process's life (an example agent module calls it when no base URL is configured)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            server = DemoServer()
            server.start()
            _shared = server
        return _shared.url


def main() -> None:  # pragma: no cover - a command for people
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    args = parser.parse_args()
    with DemoServer(latency_s=args.latency, port=args.port) as server:
        print(json.dumps({"url": server.url}), flush=True)
        threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()
