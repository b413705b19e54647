"""Running a function right after a module is first imported, whoever imports it.

The demo plugin registers itself with LiteLLM, which costs LiteLLM's import (seconds, a
hundred megabytes). A run that never loads LiteLLM should not pay that; a run that does —
through the model client's LiteLLM transport, an agent calling ``litellm`` itself, a
framework — must find ``agentflow-demo/*`` registered. :func:`after_import` waits for the
module's import and then calls the function, once.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

__all__ = ["after_import"]

_lock = threading.Lock()


def after_import(name: str, then: Callable[[], None]) -> None:
    """Call ``then()`` once module ``name`` has been imported: now, if it already is;
    else right after its first import finishes (from a finder at the front of
    ``sys.meta_path`` that takes itself out when the import comes). The same function
    given twice while waiting runs once."""
    with _lock:
        loaded = name in sys.modules
        if not loaded:
            waiting = next(
                (f for f in sys.meta_path if isinstance(f, _Waiting) and f.name == name), None
            )
            if waiting is None:
                sys.meta_path.insert(0, _Waiting(name, [then]))
            elif then not in waiting.then:
                waiting.then.append(then)
    if loaded:
        then()


class _Waiting(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, then: list[Callable[[], None]]) -> None:
        self.name = name
        self.then = then

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        with _lock:
            if self in sys.meta_path:
                sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # the real one, this finder gone
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        execute = loader.exec_module
        waiting = self.then

        def exec_module(module: ModuleType) -> None:
            execute(module)
            for then in waiting:
                then()

        # on this module's own loader object (a file loader is made per module), so the
        # spec keeps its loader, and all it offers (resources, source), as it was
        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
