"""What agentflow-eval is extended with — criteria, framework adapters, stores — each kept
in a :class:`Registry`: its built-ins listed in one tuple, more added through one public
call, and an entry-point group that installed packages declare theirs in::

    # the pyproject.toml of a package of checks
    [project.entry-points."agentflow_eval.criteria"]
    no_pii = "my_checks.criteria:no_pii"

An entry point names the object the registry's public call takes (a criterion's
declaration, a ``FrameworkAdapter``, a ``StoreForm``), under that object's own name. The
group is read once, the first time the registry is asked, so a package is imported only
by a process that looks something up.

A name added again replaces the one before it, and what a process adds itself always
comes before what was read: built-ins, then entry points (replacing a built-in of the
same name), then each public call, whenever it was made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from agentflow_eval.errors import InputError

__all__ = ["EntryPointError", "Registry"]

T = TypeVar("T")


class EntryPointError(InputError):
    """An installed package's entry point could not be used: its object does not import,
    is not what the group takes, or is declared under another name."""


class Registry(Generic[T]):
    """Things of one kind by name (``what``: "criterion"), read from ``builtins`` and the
    entry points of ``group`` on first use; ``kind`` is the type an entry point's object
    must have and ``name_of`` the name it is found by."""

    def __init__(
        self,
        *,
        what: str,
        group: str,
        kind: type[T],
        name_of: Callable[[T], str],
        builtins: Callable[[], Iterable[T]],
    ) -> None:
        self.what = what
        self.group = group
        self._kind = kind
        self._name_of = name_of
        self._builtins = builtins
        self._lock = threading.RLock()
        self._read: dict[str, T] | None = None  # built-ins, then entry points
        self._reading: dict[str, T] | None = None  # while they are read, on this thread
        self._added: dict[str, T] = {}  # by the process itself, whenever

    def add(self, item: T) -> T:
        """Add ``item`` under its name, replacing what had that name; returns it. While
        the registry reads its built-ins and entry points (which add through here too),
        what is added belongs to what was read."""
        name = self._name_of(item)
        with self._lock:
            into = self._reading if self._reading is not None else self._added
            into.pop(name, None)
            into[name] = item
        return item

    def remove(self, name: str) -> None:
        """Forget what the process added as ``name`` (a built-in or an entry point of
        that name is found again)."""
        with self._lock:
            self._added.pop(name, None)

    def get(self, name: str) -> T | None:
        """What is registered as ``name``, if anything."""
        found = self._added.get(name)
        return found if found is not None else self._all_read().get(name)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._current())

    def items(self) -> list[T]:
        """Everything registered, each name once, the latest addition first."""
        return list(reversed(self._current().values()))

    def reload(self) -> None:
        """Read the built-ins and the entry points again when next asked (a package
        installed into a running process); what the process added stays."""
        with self._lock:
            self._read = None

    def _current(self) -> dict[str, T]:
        read = self._all_read()
        with self._lock:
            merged = {name: item for name, item in read.items() if name not in self._added}
            merged.update(self._added)
        return merged

    def _all_read(self) -> dict[str, T]:
        """The built-ins and the entry points, read on the first call. Another thread
        asking meanwhile waits for all of it; a module being imported by the reading
        itself that asks (on this thread) gets what is read so far; a reading that fails
        is tried again by the next call."""
        read = self._read
        if read is not None:
            return read
        with self._lock:
            if self._read is not None:
                return self._read
            if self._reading is not None:
                return dict(self._reading)
            self._reading = {}
            try:
                for item in self._builtins():
                    self.add(item)
                for item in self._from_entry_points():
                    self.add(item)
                self._read = self._reading
            finally:
                self._reading = None
            return self._read

    def _from_entry_points(self) -> list[T]:
        found: dict[str, tuple[EntryPoint, T]] = {}
        for point in entry_points(group=self.group):
            item = self._load(point)
            if point.name in found:
                other = found[point.name][0]
                raise EntryPointError(
                    f"{_describe(point, self.group)} and {_describe(other, self.group)} both "
                    f"declare the {self.what} {point.name!r}; uninstall one of them"
                )
            found[point.name] = (point, item)
        return [item for _, item in found.values()]

    def _load(self, point: EntryPoint) -> T:
        where = _describe(point, self.group)
        try:
            item = point.load()
        except Exception as exc:
            raise EntryPointError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
        if not isinstance(item, self._kind):
            raise EntryPointError(
                f"{where} names a {type(item).__name__}; a {self.what} is declared there "
                f"as a {self._kind.__name__}"
            )
        name = self._name_of(item)
        if name != point.name:
            raise EntryPointError(
                f"{where} names the {self.what} {name!r}; the entry point's name must be "
                f"the same ({name} = {point.value!r})"
            )
        return item


def _describe(point: EntryPoint, group: str) -> str:
    """``entry point 'no_pii = my_checks:no_pii' (my-checks 1.0, group ...)``."""
    dist = point.dist
    package = f"{dist.name} {dist.version}, " if dist is not None else ""
    return f"entry point '{point.name} = {point.value}' ({package}group {group})"
