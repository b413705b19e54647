"""A small Chrome DevTools Protocol client: headless Chromium showing a page that is built
by scripts (a single-page app), read back as text and as a screenshot.

``chromium --dump-dom`` returns before an app has fetched its data; over the DevTools
protocol a test waits until the page says what it expects."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import websockets

from tests.support.chromium import FLAGS

__all__ = ["DevToolsPage", "open_page", "shown_text"]


async def shown_text(
    read: Callable[[], Awaitable[str]],
    needles: tuple[str, ...],
    *,
    timeout_s: float,
    what: str,
    every_s: float = 0.5,
) -> str:
    """The text ``read`` returns once it contains every one of ``needles``, read every
    ``every_s`` seconds; an assertion naming ``what`` and the needles it never showed."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = await read()
        if all(needle in text for needle in needles):
            return text
        await asyncio.sleep(every_s)
    missing = [n for n in needles if n not in text]
    raise AssertionError(f"the {what} never showed {missing}; it showed:\n{text[:3000]}")


class DevToolsPage:
    """One page of a running Chromium, driven over its DevTools websocket."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        await self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await self._socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def text(self) -> str:
        return str(await self.evaluate("document.body ? document.body.innerText : ''") or "")

    async def wait_for_text(self, *needles: str, timeout_s: float = 60) -> str:
        """The page's text once it contains every one of ``needles``."""
        return await shown_text(self.text, needles, timeout_s=timeout_s, what="page")

    async def screenshot(self, out: Path, *, width: int = 1280, height: int = 3400) -> Path:
        """A PNG of the page in a ``width`` × ``height`` window (apps that scroll inside
        their own frame show everything only when the window is that tall)."""
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        await asyncio.sleep(1.5)  # let the app lay itself out again
        shot = await self.call("Page.captureScreenshot", format="png")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))
        return out


class open_page:
    """Start headless Chromium on ``url`` with a DevTools port; yield its page."""

    def __init__(self, binary: str, profile_dir: Path, url: str, *, width: int = 1280) -> None:
        self.command = [
            binary,
            *FLAGS,
            f"--user-data-dir={profile_dir}",
            "--remote-debugging-port=0",
            f"--window-size={width},900",
            url,
        ]
        self.profile_dir = profile_dir
        self.process: subprocess.Popen[bytes] | None = None
        self._socket: Any = None

    async def __aenter__(self) -> DevToolsPage:
        self.profile_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        port_file = self.profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            await asyncio.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        target = await asyncio.to_thread(_page_target, port)
        self._socket = await websockets.connect(target, max_size=64 * 1024 * 1024)
        page = DevToolsPage(self._socket)
        await page.call("Page.enable")
        await page.call("Runtime.enable")
        return page

    async def __aexit__(self, *exc: object) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _page_target(port: int) -> str:
    import urllib.request

    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                pages = [t for t in json.loads(r.read()) if t.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("chromium has no page to drive")
        time.sleep(0.2)
