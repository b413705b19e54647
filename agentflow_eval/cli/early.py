"""What the command does before it imports anything heavy: for a run that goes through
Prefect (``run``, ``rejudge``), launch Prefect's temporary API server, so that it boots
on the other core while the command imports Prefect and the agent and checks the inputs
(:mod:`agentflow_eval.flows.support.temporary_api`, standard library only). First of
all, descriptor 1 is pointed at stderr and the real stdout kept for the command's result
(:mod:`.result_stdout`), so that neither the server nor the agent can write there.

A ``--resume`` folder another process holds is refused before the server is launched:
its lock is taken first, and the run's handle owns it from then on. Nothing here needs
more than the command line and the environment, read as the words they are; the parser
reads them properly afterwards, and anything it refuses ends the command (the server
with it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agentflow_eval.cli.result_stdout import ResultStdout, reserve_stdout
from agentflow_eval.flows.support.temporary_api import TemporaryPrefectAPI
from agentflow_eval.run.folder_lock import RunFolderLock

__all__ = ["NO_PREFECT_ENV", "EarlyStart", "start_early", "wants_no_prefect"]

NO_PREFECT_ENV = "AGENTFLOW_EVAL_NO_PREFECT"
"""The environment setting that makes every ``run`` take the path without Prefect
(``1``, ``true``, ``yes`` or ``on``), as ``--no-prefect`` does for one."""

_TRUE = ("1", "true", "yes", "on")
_RUNS_STAGES = ("run", "eval", "rejudge", "traces")


def wants_no_prefect(flag: bool, environ: Mapping[str, str]) -> bool:
    """Whether the run goes without Prefect: ``--no-prefect``, or the environment says
    so (:data:`NO_PREFECT_ENV`)."""
    return flag or environ.get(NO_PREFECT_ENV, "").strip().lower() in _TRUE


@dataclass
class EarlyStart:
    """What was started before the command's imports: the temporary API server (``None``
    when the run needs none), the lock of the folder ``--resume`` names, and the real
    stdout kept for the command's result."""

    api: TemporaryPrefectAPI | None = None
    held: RunFolderLock | None = None
    stdout: ResultStdout | None = None
    owns_process: bool = False
    """The process is the command's alone: what it imports may be frozen out of the
    garbage collector's reach (:mod:`agentflow_eval.import_cost`)."""

    @property
    def result_stream(self) -> TextIO:
        """Where the command prints its result: the real stdout."""
        return self.stdout.stream if self.stdout is not None else sys.stdout

    def release(self) -> None:
        """Let go of the resumed folder, on every way out (the run's handle releases it
        when the run ends; this is for the ways that never got that far), and give
        stdout back."""
        if self.held is not None:
            self.held.release()
        if self.stdout is not None:
            self.stdout.release()


def start_early(
    argv: Sequence[str], environ: Mapping[str, str], *, owns_process: bool = False
) -> EarlyStart:
    """Start what a run command needs before its imports (see the module). Raises
    :class:`~agentflow_eval.errors.InputError` for a ``--resume`` folder another process
    holds."""
    words = list(argv)
    command = next((word for word in words if not word.startswith("-")), None)
    if command not in _RUNS_STAGES or {"-h", "--help", "--version"} & set(words):
        return EarlyStart(owns_process=owns_process)
    _quiet_prefect(verbose=bool({"-v", "--verbose"} & set(words)))
    resume = _value_of(words, "--resume")
    held = None
    if resume and (Path(resume) / "run.json").is_file():
        held = RunFolderLock.acquire(resume)
    no_prefect = wants_no_prefect("--no-prefect" in words, environ)
    early = EarlyStart(held=held, stdout=reserve_stdout(), owns_process=owns_process)
    if not no_prefect:
        try:
            early.api = TemporaryPrefectAPI.launch()
        except BaseException:
            early.release()
            raise
    return early


def _value_of(words: Sequence[str], flag: str) -> str | None:
    """The value given to ``flag`` (``--flag VALUE`` or ``--flag=VALUE``)."""
    for index, word in enumerate(words):
        if word == flag and index + 1 < len(words):
            return words[index + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    return None


def _quiet_prefect(*, verbose: bool) -> None:
    """Prefect's settings for a run of this command, unless the user set them (they are
    read when Prefect is imported, and by the server this launches):

    - the flow run's record gets every log line; the terminal only warnings and errors
      (the scorecard says the rest), unless ``--verbose``;
    - the temporary server lives for one run: its usage heartbeat describes nothing, and
      offline (or racing the server's fresh database) it prints errors into the run's
      output; a server of one's own (``PREFECT_API_URL``) keeps its own setting;
    - Prefect's client sends usage events of its own unless ``DO_NOT_TRACK`` is set: a
      run of this command is not a Prefect user's onboarding."""
    os.environ.setdefault(
        "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "INFO" if verbose else "WARNING"
    )
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
