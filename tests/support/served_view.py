"""``agentflow-eval view --serve`` as a real subprocess, serving an output folder of runs
on a free port for a browser test."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["served_output_folder"]


@contextmanager
def served_output_folder(output: Path) -> Iterator[str]:
    """The address the command serves ``output`` at, until the block ends (then the
    server is stopped). Nothing is opened in a browser (``--no-open``, ``BROWSER=true``)."""
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "agentflow-eval"),
            *("view", str(output), "--serve", "--port", "0", "--no-open"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BROWSER": "true"},
    )
    first: list[str] = []
    # its first line says where it serves; a thread, so a server that says nothing fails
    reader = threading.Thread(target=lambda: first.append(server.stdout.readline()))  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout=60)
    try:
        assert first and "serving the runs under" in first[0], server.stderr
        yield first[0].split(" at ", 1)[1].split()[0]
    finally:
        server.terminate()
        server.wait(timeout=30)
