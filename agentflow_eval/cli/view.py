"""``agentflow-eval view [OUTPUT_DIR]``: open the newest run's report in a browser; with
``--serve``, serve a page of every run under the folder (pass rate, agent, time, links to
each report and its eval set's history) on 127.0.0.1 until Ctrl-C.

Browsers are opened through :mod:`webbrowser`, which honours ``BROWSER`` (``BROWSER=true``
opens nothing: what the tests do); ``run --open`` opens a finished run's report the same
way (:func:`open_report`).
"""

from __future__ import annotations

import argparse
import functools
import sys
import webbrowser
from collections.abc import Callable
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from agentflow_eval.cli.common import EXIT_OK, fail, one_line, terminal_text
from agentflow_eval.errors import InputError
from agentflow_eval.publish.local_runs import local_runs, newest_report
from agentflow_eval.report.index_page import render_index
from agentflow_eval.report.local_index import render_local_index
from agentflow_eval.report.trend_data import trend_data
from agentflow_eval.report.trend_page import render_trend

__all__ = ["RunsHandler", "add_parser", "open_report", "run", "runs_server", "serve_runs"]

Opener = Callable[[str], object]
"""Opens a URL in a browser (:func:`webbrowser.open`, or a test's stand-in)."""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "view",
        help="open the newest report, or serve a page of every run",
        description="Open the newest run's report.html under OUTPUT_DIR in a browser; with "
        "--serve, serve a page listing every run under it (pass rate, agent, time, links) "
        "on 127.0.0.1 until Ctrl-C.",
    )
    parser.add_argument(
        "output",
        nargs="?",
        default="eval-results",
        metavar="OUTPUT_DIR",
        help="the folder runs were written to (default eval-results)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="serve a page of every run on 127.0.0.1"
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port for --serve (default 8765; 0: any free one)"
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the address without opening a browser"
    )


def open_report(report: Path, opener: Opener | None = None) -> None:
    """Open ``report`` (a report.html) with ``opener`` (default: :func:`webbrowser.open`,
    looked up when called)."""
    (opener or webbrowser.open)(report.resolve().as_uri())


def run(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if not output.is_dir():
        return fail(f"{output}: no such folder of runs (give the folder runs were written to)")
    if args.serve:
        if not 0 <= args.port <= 65535:
            return fail(f"--port: expected 0 to 65535, got {args.port}")
        return serve_runs(output, args.port, None if args.no_open else webbrowser.open)
    try:
        report = newest_report(output)
    except InputError as exc:
        return fail(one_line(exc))
    if report is None:
        return fail(f"{output}: no run with a report.html here")
    print(terminal_text(str(report)))
    if not args.no_open:
        open_report(report)
    return EXIT_OK


class RunsHandler(SimpleHTTPRequestHandler):
    """Files under the output folder as they are, and two pages made on each request (so
    a run that finishes meanwhile shows up): ``/`` lists every run, ``/<eval set>/index.html``
    is that eval set's history page, ``/<eval set>/trend.html`` its trend by version and
    window."""

    def do_GET(self) -> None:
        page = self._page(unquote(urlsplit(self.path).path))
        if page is None:
            super().do_GET()
            return
        body = page.encode("utf-8")
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _page(self, path: str) -> str | None:

        root = Path(self.directory)
        if path in ("/", "/index.html"):
            runs = local_runs(root)
            title = root.resolve().name
            return render_local_index(title, runs.manifests, unreadable=len(runs.unreadable))
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[1] in ("index.html", "trend.html"):
            manifest = local_runs(root).manifests.get(parts[0])
            if manifest is None:
                return None
            if parts[1] == "trend.html":
                data = trend_data(manifest, lambda folder, name: f"{folder}/{name}")
                return render_trend(data, explorer_link=None)
            return render_index(manifest, trend_link="trend.html")
        return None

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal keeps the address and nothing else."""


def runs_server(output: Path, port: int) -> ThreadingHTTPServer:
    """A server of ``output``'s runs bound to 127.0.0.1:``port`` (0: any free port), not
    yet serving."""
    handler = functools.partial(RunsHandler, directory=str(output))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve_runs(output: Path, port: int, opener: Opener | None) -> int:
    """Serve ``output``'s runs on 127.0.0.1:``port`` until Ctrl-C; open the page with
    ``opener`` (``None``: only print its address)."""
    try:
        server = runs_server(output, port)
    except OSError as exc:
        return fail(f"--port {port}: {one_line(exc)}")
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(terminal_text(f"serving the runs under {output} at {url}  (Ctrl-C stops)"), flush=True)
    if opener is not None:
        opener(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_OK
