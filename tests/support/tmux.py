"""A command at a real terminal: a tmux session on a server of the test's own (its socket
in the test's folder, so no other tmux is touched), keys sent as a person types them, and
the screen read back as text.

The pane stays after the command ends (``remain-on-exit``), so a test reads the last
screen and the exit status."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

__all__ = ["Tmux", "tmux_binary"]


def tmux_binary() -> str:
    """The tmux executable; a skip saying why when it is missing."""
    found = shutil.which("tmux")
    if found is None:
        pytest.skip("tmux not found on PATH (apt-get install tmux)")
    return found


class Tmux:
    """One tmux session running ``command`` in a ``width`` × ``height`` window."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        folder: Path,
        env: Mapping[str, str],
        cwd: Path,
        width: int = 140,
        height: int = 60,
        name: str = "test",
    ) -> None:
        self._binary = tmux_binary()
        self._socket = folder / "tmux.sock"
        self._target = name
        folder.mkdir(parents=True, exist_ok=True)
        # the command line sets the window's environment itself: a tmux server passes
        # its own environment, not the client's, to the panes it starts
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # the shell stays to write the command's exit status to a file: tmux marks a pane
        # dead only once it has reaped its process, which a busy tmux server may not do
        # for a minute or more
        self._status = folder / "exit-status"
        shell = (
            f"cd {shlex.quote(str(cwd))} && env -i {exports} {shlex.join(command)}; "
            f"echo $? > {shlex.quote(str(self._status))}"
        )
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", str(width),
            "-y", str(height), "sh", "-c", shell,
        )  # fmt: skip
        self._tmux("set-option", "-t", name, "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            [self._binary, "-S", str(self._socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout

    def keys(self, *keys: str) -> None:
        """Type ``keys`` literally, each as one keystroke or string (no key names)."""
        for key in keys:
            self._tmux("send-keys", "-t", self._target, "-l", key)
            time.sleep(0.05)

    def enter(self) -> None:
        self._tmux("send-keys", "-t", self._target, "Enter")

    def screen(self) -> str:
        """The text on the screen now (with the scrollback above it)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", self._target)

    def wait_for(self, text: str, *, timeout_s: float = 60, after: str | None = None) -> str:
        """The screen once it shows ``text`` (below the last ``after`` on it, if given)."""
        deadline = time.monotonic() + timeout_s
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            seen = screen if after is None else screen.rpartition(after)[2]
            if text in seen:
                return screen
            if self.exit_status() is not None and text not in seen:
                break
            time.sleep(0.2)
        raise AssertionError(f"the terminal never showed {text!r}; it showed:\n{screen[-4000:]}")

    def exit_status(self) -> int | None:
        """The command's exit status once it ended, else ``None``."""
        written = self._status.read_text().strip() if self._status.is_file() else ""
        if written.isdigit():
            return int(written)
        out = self._tmux(
            "display-message", "-p", "-t", self._target, "#{pane_dead} #{pane_dead_status}"
        ).split()
        return int(out[1]) if out and out[0] == "1" and len(out) > 1 else None

    def wait_exit(self, timeout_s: float = 60) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.exit_status()
            if status is not None:
                return status
            time.sleep(0.2)
        raise AssertionError(f"the command did not end; its screen:\n{self.screen()[-4000:]}")

    def close(self) -> None:
        subprocess.run(
            [self._binary, "-S", str(self._socket), "kill-server"],
            capture_output=True,
            timeout=30,
            check=False,
        )

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
