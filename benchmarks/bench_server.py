"""The benchmark's model server, meant to run in its own process (so it does not share
the evaluator's GIL): ``python -m benchmarks.bench_server --latency 0.05`` prints its
``api_base`` on the first line of stdout and serves until killed. ``GET <api_base>/stats``
says how many requests each model got."""

from __future__ import annotations

import argparse
import threading

from agentflow_eval.testing.openai_server import ScriptedOpenAIServer
from benchmarks.bench_model import handler

__all__ = ["main"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ScriptedOpenAIServer(
        handler=handler, latency_s=args.latency, port=args.port, keep_requests=False
    )
    with server:
        print(server.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
