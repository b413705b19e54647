"""Writing into a run folder never goes through a symbolic link.

A run folder is written to again and again — a resume takes its lock and appends to its
trials — so a link planted in one (``trials.jsonl -> ~/.bashrc``, ``.agentflow.lock ->
some file``) would have a run append to, truncate or overwrite whatever it points at.
So:

- taking a run folder (its lock) refuses a folder that holds a link
  (:func:`refuse_links`): one line naming the link, exit 2, before anything is written;
- a file opened to append to or to lock is opened with ``O_NOFOLLOW``
  (:func:`open_no_follow`), so a link made while the run runs is refused the same way
  instead of followed;
- a whole file is written beside its target and renamed over it
  (:mod:`agentflow_eval.files.atomic`): a link in its place is replaced, never followed.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from agentflow_eval.errors import InputError

__all__ = ["LinkInRunFolder", "open_no_follow", "refuse_links"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK}
"""What ``open`` says for a link under ``O_NOFOLLOW`` (Linux: ELOOP; FreeBSD: EMLINK)."""


class LinkInRunFolder(InputError):
    """A run folder holds a symbolic link where the run writes."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: is a symbolic link; a run never writes through a link in its folder "
            "(remove it, or put the file itself there)"
        )
        self.path = path


def refuse_links(folder: Path) -> None:
    """Raise :class:`LinkInRunFolder` for the first symbolic link directly in
    ``folder`` (a missing folder holds none)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.is_symlink():
            raise LinkInRunFolder(Path(entry.path))


def open_no_follow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags, mode)`` that refuses a symbolic link in ``path``'s place
    with :class:`LinkInRunFolder`."""
    try:
        return os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS and os.path.islink(path):
            raise LinkInRunFolder(path) from None
        raise
