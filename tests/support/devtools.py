"""Headless Chromium driven over the DevTools protocol, for tests that need more than a
DOM dump: when the load event fired, how many nodes the page holds, what its renderer
process takes in memory, and what the page shows after a click.

The protocol runs over ``--remote-debugging-pipe`` (Chromium reads commands from file
descriptor 3 and writes replies and events to descriptor 4, each message JSON followed by
a NUL byte), so no port is opened and no websocket library is needed. Evaluating
expressions through the protocol is the browser's own debugger at work: the page's
Content-Security-Policy, which forbids any script but its own, does not apply to it.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DevTools", "DevToolsError", "LoadFigures", "Tab", "devtools_session"]


class DevToolsError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


@dataclass(frozen=True)
class LoadFigures:
    """What loading one page cost, read once its load event fired."""

    load_event_ms: float
    """From the start of navigation to the end of the load event."""
    dom_content_loaded_ms: float
    nodes: int
    """Every node in the document (elements, text, comments)."""
    elements: int
    js_heap_used_mib: float
    renderer_rss_mib: float | None
    """Resident memory of the renderer processes (Linux only; None elsewhere)."""
    main_thread_cpu_ms: float
    """CPU time of the page's main thread from navigation to the load event (parsing,
    style, layout, script): what the load costs, steadier than ``load_event_ms`` on a
    busy machine, where waiting for a core counts as loading."""


_COUNT_NODES = """(() => {
  const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
  let nodes = 1;
  while (walker.nextNode()) { nodes += 1; }
  const timing = performance.getEntriesByType("navigation")[0];
  return {
    nodes: nodes,
    elements: document.getElementsByTagName("*").length,
    load: timing.loadEventEnd,
    dcl: timing.domContentLoadedEventEnd,
  };
})()"""


class DevTools:
    """One browser and the pipe to it; :meth:`open_tab` gives pages to drive."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int):
        self.process = process
        self._out = to_browser
        self._in = from_browser
        self._buffer = b""
        self._next_id = 0
        self._events: deque[dict[str, Any]] = deque()

    # --- the protocol ------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DevToolsError("no message from the browser in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise DevToolsError(f"the browser closed the pipe (exit {self.process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout_s: float = 60.0,
    ) -> dict[str, Any]:
        """Send one command and wait for its reply; events arriving meanwhile are kept."""
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        os.write(self._out, json.dumps(command).encode("utf-8") + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self._events.append(message)

    def wait_for(
        self, event: str, *, session: str | None = None, timeout_s: float = 60.0
    ) -> dict[str, Any]:
        """The next ``event`` (of ``session``), kept or yet to come."""
        for message in list(self._events):
            if message["method"] == event and message.get("sessionId") == session:
                self._events.remove(message)
                return message
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._read_message(deadline)
            if message.get("method") == event and message.get("sessionId") == session:
                return message
            if "method" in message:
                self._events.append(message)

    # --- pages -------------------------------------------------------------------------

    def open_tab(self, *, width: int = 1300, height: int = 900) -> Tab:
        """A new blank tab of ``width`` × ``height`` CSS pixels."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        tab = Tab(self, target, session)
        tab.send("Page.enable")
        tab.send("Runtime.enable")
        tab.send("Performance.enable")
        tab.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        return tab

    def _renderers(self) -> list[dict[str, Any]]:
        info = self.send("SystemInfo.getProcessInfo")
        return [p for p in info.get("processInfo", []) if p.get("type") == "renderer"]

    def renderer_rss_mib(self) -> float | None:
        """Resident memory of the browser's renderer processes, from ``/proc``."""
        total = 0.0
        found = False
        for process in self._renderers():
            status = Path(f"/proc/{process['id']}/status")
            try:
                text = status.read_text()
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
                    found = True
        return total if found else None


@dataclass
class Tab:
    """One page of a :class:`DevTools` browser."""

    browser: DevTools
    target: str
    session: str

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def load(self, page: Path | str, *, timeout_s: float = 120.0) -> LoadFigures:
        """Navigate to ``page`` (a file or URL) and wait for its load event; the figures
        are read once it fired (the node count after the page's own script ran)."""
        url = page.resolve().as_uri() if isinstance(page, Path) else page
        before = self.metrics()
        self.send("Page.navigate", {"url": url})
        self.browser.wait_for("Page.loadEventFired", session=self.session, timeout_s=timeout_s)
        metrics = self.metrics()
        counts = self.evaluate(_COUNT_NODES)
        return LoadFigures(
            load_event_ms=float(counts["load"]),
            dom_content_loaded_ms=float(counts["dcl"]),
            nodes=int(counts["nodes"]),
            elements=int(counts["elements"]),
            js_heap_used_mib=float(metrics.get("JSHeapUsedSize", 0)) / (1 << 20),
            renderer_rss_mib=self.browser.renderer_rss_mib(),
            main_thread_cpu_ms=(metrics["ThreadTime"] - before["ThreadTime"]) * 1000,
        )

    def metrics(self) -> dict[str, float]:
        """The page's performance counters (``Performance.getMetrics``) by name."""
        reply = self.send("Performance.getMetrics")
        return {metric["name"]: float(metric["value"]) for metric in reply["metrics"]}

    def evaluate(self, expression: str, *, timeout_s: float = 60.0) -> Any:
        """The value of ``expression`` in the page (promises are awaited), as JSON."""
        reply = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session=self.session,
            timeout_s=timeout_s,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DevToolsError(f"evaluating in the page failed: {text}")
        return reply["result"].get("value")

    def screenshot(self, out: Path, *, full_height: int | None = None) -> Path:
        """A PNG of the tab's viewport (or of its top ``full_height`` pixels)."""
        import base64

        params: dict[str, Any] = {"format": "png"}
        if full_height is not None:
            width = self.evaluate("document.documentElement.clientWidth")
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": full_height, "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out


_LAUNCHER = """import os, sys
os.dup2(int(sys.argv[1]), 3)
os.dup2(int(sys.argv[2]), 4)
os.close(int(sys.argv[1]))
os.close(int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])
"""


@contextmanager
def devtools_session(binary: str, profile_dir: Path, flags: tuple[str, ...]) -> Iterator[DevTools]:
    """Start ``binary`` with ``flags`` and a DevTools pipe; closed (and the browser
    stopped) on exit."""
    child_in, to_browser = os.pipe()
    from_browser, child_out = os.pipe()
    # The browser wants the pipe on descriptors 3 and 4 exactly. A small launcher moves it
    # there: first above 9, so that moving one onto 3 or 4 cannot overwrite the other.
    high_in = fcntl.fcntl(child_in, fcntl.F_DUPFD_CLOEXEC, 10)
    high_out = fcntl.fcntl(child_out, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(child_in)
    os.close(child_out)
    child_in, child_out = high_in, high_out
    command = [
        sys.executable,
        "-c",
        _LAUNCHER,
        str(child_in),
        str(child_out),
        binary,
        *flags,
        f"--user-data-dir={profile_dir}",
        "--remote-debugging-pipe",
        "about:blank",
    ]
    process = subprocess.Popen(
        command,
        pass_fds=(child_in, child_out),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(child_in)
    os.close(child_out)
    browser = DevTools(process, to_browser, from_browser)
    try:
        yield browser
    finally:
        with suppress(DevToolsError, OSError):
            browser.send("Browser.close", timeout_s=10)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(to_browser)
        os.close(from_browser)
