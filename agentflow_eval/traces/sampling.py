"""Which traces are scored: a share of each stratum, decided by the trace's id alone, so
every run (and a run resumed, or one racing another) picks the same traces.

A trace is picked when a hash of its id, read as a fraction in [0, 1), is below the rate.
Strata are the values of attributes the team names (the agent's version, the model, a
route, a tenant): each stratum is sampled at the rate, and a stratum of which no trace
was picked gets its lowest-hash trace scored all the same, so a rare version or tenant
is never missing from the scores. What was scored of what was seen, in all and per
stratum, is counted and said (:meth:`Sampler.shares`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Sampler", "Share", "Stratum", "fraction_of"]

Stratum = tuple[str, ...]
"""The values of the strata attributes, in the order they were named (``"-"`` for one a
trace does not carry)."""

ItemT = TypeVar("ItemT")


def fraction_of(trace_id: str) -> float:
    """The trace's place in [0, 1): the first eight bytes of its id's SHA-256."""
    digest = hashlib.sha256(trace_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class Share:
    """Of one stratum (or all): the traces seen and those scored."""

    seen: int = 0
    scored: int = 0

    @property
    def rate(self) -> float:
        return self.scored / self.seen if self.seen else 0.0


@dataclass
class _Standby(Generic[ItemT]):
    fraction: float
    item: ItemT


@dataclass
class Sampler(Generic[ItemT]):
    """Decides, trace by trace, and keeps the counts (see the module)."""

    rate: float
    strata: tuple[str, ...] = ()
    counts: dict[Stratum, Share] = field(default_factory=dict)
    _standby: dict[Stratum, _Standby[ItemT]] = field(default_factory=dict)

    def consider(self, stratum: Stratum, trace_id: str, item: ItemT) -> bool:
        """Whether the trace is scored now; if not, it may be kept (``item``) as its
        stratum's stand-in, scored at the end should nothing else of it be."""
        share = self.counts.setdefault(stratum, Share())
        share.seen += 1
        fraction = fraction_of(trace_id)
        if fraction < self.rate:
            share.scored += 1
            self._standby.pop(stratum, None)
            return True
        if share.scored == 0:
            held = self._standby.get(stratum)
            if held is None or fraction < held.fraction:
                self._standby[stratum] = _Standby(fraction, item)
        return False

    def stand_ins(self) -> list[ItemT]:
        """The stand-ins of the strata nothing was picked of (each counted as scored);
        call it once, at the end."""
        chosen = []
        for stratum, held in self._standby.items():
            share = self.counts[stratum]
            if share.scored == 0:
                share.scored += 1
                chosen.append(held.item)
        self._standby.clear()
        return chosen

    def withdraw(self, stratum: Stratum) -> None:
        """A trace of ``stratum`` picked, then found unreadable: not scored after all."""
        share = self.counts[stratum]
        share.scored = max(0, share.scored - 1)

    def total(self) -> Share:
        return Share(
            seen=sum(s.seen for s in self.counts.values()),
            scored=sum(s.scored for s in self.counts.values()),
        )

    def shares(self) -> Mapping[Stratum, Share]:
        return dict(self.counts)

    def restore(self, counts: Mapping[Stratum, Share]) -> None:
        """Counts a resumed run had reached."""
        self.counts = {stratum: Share(s.seen, s.scored) for stratum, s in counts.items()}
