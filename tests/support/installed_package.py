"""A package installed for one test as pip would leave it: its modules and a
``<name>-<version>.dist-info`` folder (``METADATA``, ``entry_points.txt``) in a folder put
at the front of ``sys.path``, where ``importlib.metadata`` finds its entry points.

The registries read their entry points once; each registry given is read again after the
package is installed and again after it is gone, so a test sees it and no later test
does."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["installed_package"]


@contextmanager
def installed_package(
    folder: Path,
    name: str,
    *,
    entry_points: Mapping[str, Mapping[str, str]],
    modules: Mapping[str, str],
    reload: Iterable[Any] = (),
) -> Iterator[Path]:
    """Install package ``name`` into ``folder``: ``modules`` maps a module's file name
    (``checks.py``) to its source, ``entry_points`` a group to its ``name = value`` lines;
    ``reload`` are the registries to read again."""
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, source in modules.items():
        (folder / file_name).write_text(textwrap.dedent(source), "utf-8")
    dist_info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", "utf-8"
    )
    (dist_info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
            for group, points in entry_points.items()
        ),
        "utf-8",
    )
    registries = list(reload)
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    for registry in registries:
        registry.reload()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for file_name in modules:
            sys.modules.pop(Path(file_name).stem, None)
        importlib.invalidate_caches()
        for registry in registries:
            registry.reload()
