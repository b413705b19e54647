"""``rouge-score`` and nltk's Porter stemmer, imported without scipy's statistics.

nltk's package imports ``scipy.stats`` whenever scipy is installed, for collocation
measures ROUGE never uses; scipy builds its distributions' documentation as it imports,
which costs every run more than a second before its first trial (and scipy is installed:
the run comparison uses it). Imported here with ``scipy.stats`` hidden, nltk falls back
as it does without scipy, and ``scipy.stats`` imports normally afterwards for whoever
needs it. A ``scipy.stats`` already imported is left alone.

Module imports run under Python's import lock for this module, but another thread
importing ``scipy.stats`` for the first time in the same instant would see it missing;
nothing in this package imports from threads, and the window is the length of nltk's
import.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["porter", "rouge_scorer", "tokenizers"]

_HIDDEN = "scipy.stats"


@contextmanager
def _hidden(module: str) -> Iterator[None]:
    """``import module`` raises ImportError inside the block (unless already imported)."""
    if module in sys.modules:
        yield
        return
    sys.modules[module] = None  # type: ignore[assignment]  # Python's "not importable" mark
    try:
        yield
    finally:
        if sys.modules.get(module, "") is None:
            del sys.modules[module]


with _hidden(_HIDDEN):
    from nltk.stem import porter
    from rouge_score import rouge_scorer, tokenizers
