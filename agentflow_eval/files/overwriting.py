"""Whether a command may write over the file its ``--output`` names.

A file that exists is written over only when it is a run's output of the kind the command
writes, known by how agentflow-eval begins every such file:

- a JSON report (``run --output FILE.json``, ``rejudge --output FILE.json``): a
  results.json, a JSON object whose first members are ``"schema_version"``
  (``"MAJOR.MINOR"``) and then ``"run_id"``;
- an HTML report (``report --output FILE``): a page whose head carries agentflow-eval's
  generator tag, ``<meta name="generator" content="agentflow-eval VERSION">``.

Anything else is refused in one line naming the file unless the command is given
``--force``, and so is every existing file where the command writes no run's output (an
eval set ``eval-set convert --output`` makes). Only a file's first bytes are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentflow_eval.errors import InputError

__all__ = ["HTML_REPORT", "JSON_REPORT", "OutputExists", "RunOutput", "check_overwrite"]

_HEAD_BYTES = 8192
"""How much of a file is read to know it: the report page's generator tag comes after its
Content-Security-Policy, within its first kilobyte."""


class OutputExists(InputError):
    """The file an ``--output`` names exists and is not one it may write over."""


@dataclass(frozen=True)
class RunOutput:
    """A kind of file a run's output is, and how its opening is known."""

    description: str
    opening: re.Pattern[bytes]

    def written_by_us(self, path: Path) -> bool:
        """Whether ``path`` opens as this project writes this kind of file (an unreadable
        file does not)."""
        try:
            with path.open("rb") as file:
                head = file.read(_HEAD_BYTES)
        except OSError:
            return False
        return self.opening.search(head) is not None


JSON_REPORT = RunOutput(
    "a run's JSON report (results.json)",
    re.compile(rb'\A\s*\{\s*"schema_version"\s*:\s*"\d+\.\d+"\s*,\s*"run_id"\s*:'),
)
HTML_REPORT = RunOutput(
    "an HTML report agentflow-eval wrote",
    re.compile(rb'<meta name="generator" content="agentflow-eval [^"<>]*">'),
)


def check_overwrite(path: Path, kind: RunOutput | None, *, force: bool) -> None:
    """Raise :class:`OutputExists` when ``path`` exists and may not be written over: it is
    not a ``kind`` of run output (``None``: the command writes none, so nothing that
    exists may be), and ``force`` was not given. A folder is left to the writer, whose
    error says what it is."""
    if force or not path.exists() or path.is_dir():
        return
    if kind is not None and kind.written_by_us(path):
        return
    what = f" and is not {kind.description}" if kind is not None else ""
    raise OutputExists(f"{path}: the file exists{what}; give --force to write over it")
