"""Python's cyclic garbage collector paused while a process makes its big imports.

Importing LiteLLM, Prefect or the command's module graph allocates hundreds of thousands
of objects and frees almost none, so the collections that fire meanwhile find nothing to
free: about a fifth of the CPU of ``import litellm`` goes to them. Paused for the import
and resumed after, the collector does no less later (its first full collection still
sees every object) and the process starts that much cheaper. The command line, which
owns its process, also freezes what it loaded, so that no later collection walks it.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

__all__ = ["import_paused", "paused_collection"]


@contextmanager
def paused_collection(*, freeze: bool = False) -> Iterator[None]:
    """The block runs with the cyclic collector paused; it is resumed after only if it
    was running before (a pause inside a pause leaves it to the outer one).

    ``freeze``: what the process holds when the block ends is moved out of the
    collector's reach for good (``gc.freeze``), so later full collections skip it. Only
    for a process this package owns (the command line), whose imports live as long as it
    does: in someone else's, a cycle that was already garbage would never be freed."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()


def import_paused(name: str) -> ModuleType:
    """The module ``name``, imported with the collector paused if it is not loaded yet."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    with paused_collection():
        return importlib.import_module(name)
