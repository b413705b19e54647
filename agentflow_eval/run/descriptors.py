"""File descriptors for a run's concurrency: checked before the run starts.

Every trial in flight holds descriptors: its model connection, its working directory's
files, whatever its agent opens (a tool's file, a subprocess's pipes); every judge call
in flight holds a connection. A process whose soft ``RLIMIT_NOFILE`` is below what its
concurrency needs fails trials midway with ``Too many open files``, charged to the agent.
So the plan estimates the need (:func:`descriptor_budget`) and, before anything starts,
raises the soft limit as far as the hard limit allows, or, when even that is too little,
lowers the run's concurrency to what fits — saying which in one warning line.
"""

from __future__ import annotations

from dataclasses import dataclass

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

__all__ = [
    "FDS_PER_JUDGE_CALL",
    "FDS_PER_TRIAL",
    "PROCESS_FDS",
    "DescriptorBudget",
    "descriptor_budget",
    "fit_descriptors",
]

FDS_PER_TRIAL = 4
"""An estimate, on the generous side: the model connection, a file of the trial's
working directory, and two for the agent's own (a tool's file, a subprocess pipe)."""
FDS_PER_JUDGE_CALL = 2
"""The judge's connection, and one spare (a reconnect while the old socket closes)."""
PROCESS_FDS = 256
"""The process itself: the interpreter, the run folder's files, logs, the event loop,
the Prefect client and its connections, imported libraries' files."""


@dataclass(frozen=True)
class DescriptorBudget:
    """What a run's concurrency needs and what to do about the limit."""

    asked: int
    """The trials in flight asked for."""
    needed: int
    """The descriptors they need, with the judge calls and the process."""
    soft: int
    raise_soft_to: int | None
    """The new soft limit, when it must be raised (``None``: left as it is)."""
    max_concurrency: int
    """The trials in flight the run can afford (``asked`` when it fits)."""

    @property
    def warning(self) -> str | None:
        """One line saying what was changed, or ``None`` when nothing had to be."""
        if self.raise_soft_to is None and self.max_concurrency == self.asked:
            return None
        done = []
        if self.raise_soft_to is not None:
            done.append(
                f"raised the soft file-descriptor limit from {self.soft} to {self.raise_soft_to}"
            )
        if self.max_concurrency < self.asked:
            done.append(
                f"lowered max concurrency from {self.asked} to {self.max_concurrency} trials "
                "(raise the hard limit, ulimit -Hn, to run more at once)"
            )
        return (
            f"{' and '.join(done)}: {self.asked} trials in flight need about {self.needed} "
            f"descriptors ({FDS_PER_TRIAL} per trial, {FDS_PER_JUDGE_CALL} per judge call "
            f"in flight, {PROCESS_FDS} for the process)"
        )


def descriptor_budget(
    max_concurrency: int, judge_concurrency: int, soft: int, hard: int | None
) -> DescriptorBudget:
    """What ``max_concurrency`` trials and ``judge_concurrency`` judge calls in flight
    need under the limits ``soft`` and ``hard`` (``None``: unlimited): the soft limit
    raised to what they need, as far as ``hard`` allows, and the trials lowered to what
    fits under that."""
    judges = judge_concurrency * FDS_PER_JUDGE_CALL
    needed = PROCESS_FDS + judges + max_concurrency * FDS_PER_TRIAL
    if needed <= soft:
        return DescriptorBudget(max_concurrency, needed, soft, None, max_concurrency)
    ceiling = needed if hard is None else max(soft, min(hard, needed))
    fits = max(1, (ceiling - PROCESS_FDS - judges) // FDS_PER_TRIAL)
    return DescriptorBudget(
        max_concurrency,
        needed,
        soft,
        ceiling if ceiling > soft else None,
        min(max_concurrency, fits),
    )


def fit_descriptors(max_concurrency: int, judge_concurrency: int) -> DescriptorBudget:
    """:func:`descriptor_budget` under this process's limits, applied: the soft limit is
    raised as the budget says (when that is refused, the concurrency is fitted under the
    soft limit as it is). Without the limits (not POSIX, or unlimited), nothing changes."""
    unchanged = DescriptorBudget(max_concurrency, 0, 0, None, max_concurrency)
    if resource is None:  # pragma: no cover - not POSIX
        return unchanged  # type: ignore[unreachable]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return unchanged
    found = descriptor_budget(
        max_concurrency,
        judge_concurrency,
        soft,
        None if hard == resource.RLIM_INFINITY else hard,
    )
    if found.raise_soft_to is not None:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (found.raise_soft_to, hard))
        except (ValueError, OSError):  # not allowed here: fit under the limit as it is
            return descriptor_budget(max_concurrency, judge_concurrency, soft, soft)
    return found
