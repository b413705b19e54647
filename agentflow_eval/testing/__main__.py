"""``python -m agentflow_eval.testing``: the scripted OpenAI-compatible server, standalone,
for pointing the CLI (or any client) at a model that answers from a script.

    python -m agentflow_eval.testing --replies replies.json --url-file server.url &

``replies.json`` is a list of answers, served in order, one per request:

- ``{"text": "..."}``: an answer (``prompt_tokens``/``completion_tokens`` optional);
- ``{"tool_calls": [{"name": "get_weather", "args": {"location": "Tokyo"}}]}``;
- ``{"status": 429, "message": "slow down", "headers": {"retry-after": "1"}}``: a failure.

Each may add ``"delay_s"``. Once the script is used up, every request gets the last user
message back (``--then echo``, the default) or HTTP 400 (``--then error``). The URL to
give a client (``.../v1``) is printed, and written to ``--url-file`` once the server
listens; the server runs until it is stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from agentflow_eval.testing.openai_server import Reply, ScriptedOpenAIServer, echo_handler


def reply_of(item: dict[str, Any]) -> Reply:
    """One scripted answer from its JSON form (see the module)."""
    usage = {k: int(item[k]) for k in ("prompt_tokens", "completion_tokens") if k in item}
    delay = {"delay_s": float(item["delay_s"])} if "delay_s" in item else {}
    if "status" in item:
        return Reply.error(
            int(item["status"]),
            str(item.get("message", "error")),
            headers={str(k): str(v) for k, v in dict(item.get("headers") or {}).items()},
            **delay,
        )
    if "tool_calls" in item:
        calls = [(str(call["name"]), dict(call.get("args") or {})) for call in item["tool_calls"]]
        return Reply.tools(*calls, **usage, **delay)
    if "text" in item:
        return Reply.text(str(item["text"]), **usage, **delay)
    raise ValueError(f"a reply needs 'text', 'tool_calls' or 'status': {json.dumps(item)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentflow_eval.testing",
        description="A scripted OpenAI-compatible chat-completions server on 127.0.0.1.",
    )
    parser.add_argument("--replies", type=Path, help="a JSON list of answers, served in order")
    parser.add_argument(
        "--then",
        choices=("echo", "error"),
        default="echo",
        help="after the script: echo the user's message, or answer HTTP 400",
    )
    parser.add_argument("--port", type=int, default=0, help="the port (default: any free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--url-file", type=Path, help="write the server's URL here once it listens")
    args = parser.parse_args(argv)
    try:
        items = json.loads(args.replies.read_text(encoding="utf-8")) if args.replies else []
        if not isinstance(items, list):
            raise ValueError("expected a JSON list of answers")
        replies = [reply_of(item) for item in items]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"python -m agentflow_eval.testing: error: {args.replies}: {exc}", file=sys.stderr)
        return 2
    handler = echo_handler if args.then == "echo" else None
    server = ScriptedOpenAIServer(
        replies, handler=handler, latency_s=args.latency, port=args.port, keep_requests=False
    )
    with server:
        print(server.url, flush=True)
        if args.url_file is not None:  # whole or not at all, for a reader polling for it
            partial = args.url_file.with_name(args.url_file.name + ".partial")
            partial.write_text(server.url + "\n", encoding="utf-8")
            partial.replace(args.url_file)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
