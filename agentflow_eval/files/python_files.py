"""Loading a Python file named by path (``my_agent.py:agent``, ``checks.py:no_pii``) as a
module, once per path and process."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["import_python_file"]


def import_python_file(path: Path, prefix: str) -> ModuleType:
    """The module at ``path``, registered as ``<prefix>_<stem>_<digest of the path>`` so two
    files with one name stay apart and a second load of the same file reuses the first. A
    file that fails to execute leaves nothing registered."""
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    name = f"{prefix}_{resolved.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
