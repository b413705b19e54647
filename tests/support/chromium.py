"""Headless Chromium for browser tests: dump the DOM after scripts ran, take screenshots,
or drive the browser over the DevTools protocol (:mod:`support.devtools`).

Chromium runs with a throwaway profile and nothing that reaches the network on its own
(no sync, no component updates, no background networking, no QUIC). When the browser is
missing, tests skip with the reason on a developer machine and fail in CI
(``CI=true``), where it is installed on purpose.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.devtools import DevTools, devtools_session

__all__ = ["Chromium", "chromium_binary", "png_size"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def chromium_binary() -> str:
    """The Chromium executable; a skip (or, in CI, a failure) saying why when absent."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    reason = f"headless Chromium not found (looked for {', '.join(CANDIDATES)} on PATH)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must install it (apt-get install chromium)")
    pytest.skip(reason)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (and a check that it is a PNG)."""
    header = path.read_bytes()[:24]
    if header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@dataclass
class Chromium:
    """One browser binary with its own profile directory."""

    binary: str
    profile_dir: Path
    timeout_s: float = 120.0

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [self.binary, *FLAGS, f"--user-data-dir={self.profile_dir}", *args]
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=self.timeout_s, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"chromium exited with {result.returncode}: {' '.join(command)}\n"
                f"{result.stderr[-2000:]}"
            )
        return result

    def dump_dom(self, page: Path, *, settle_ms: int = 3000) -> str:
        """The DOM after the page loaded and pending tasks (image errors, timers) ran for
        ``settle_ms`` of virtual time, serialised as HTML."""
        return self._run(
            f"--virtual-time-budget={settle_ms}", "--dump-dom", page.resolve().as_uri()
        ).stdout

    @contextmanager
    def devtools(self) -> Iterator[DevTools]:
        """A browser of its own (its own throwaway profile, so it runs beside the others)
        driven over the DevTools protocol (see :mod:`support.devtools`): load timings,
        node counts, memory, clicks, screenshots of a page after a click."""
        with (
            tempfile.TemporaryDirectory(prefix="chromium-devtools-") as profile,
            devtools_session(self.binary, Path(profile), FLAGS) as browser,
        ):
            yield browser

    def screenshot(self, page: Path, out: Path, *, width: int = 1300, height: int = 2400) -> Path:
        """A PNG of the top ``width`` × ``height`` pixels of the page."""
        out.parent.mkdir(parents=True, exist_ok=True)
        self._run(
            f"--window-size={width},{height}",
            "--virtual-time-budget=2000",
            f"--screenshot={out.resolve()}",
            page.resolve().as_uri(),
        )
        if not out.is_file():
            raise RuntimeError(f"chromium wrote no screenshot to {out}")
        return out
