"""The core tier keeps to itself (tests/unit/conftest.py): no Prefect in its processes,
no process started by its tests."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.core_tier import PREFECT_GUARD, FirstImport, ProcessInCoreTier


def test_prefect_is_not_imported() -> None:
    if not PREFECT_GUARD.on:
        pytest.skip("a session over other tiers too: their conftests import Prefect")
    assert "prefect" not in sys.modules


def test_starting_a_process_is_refused() -> None:
    with pytest.raises(ProcessInCoreTier, match="the core tier starts no process"):
        subprocess.run(["true"], check=False)


def test_the_first_import_of_a_package_is_traced_to_the_line_that_did_it() -> None:
    watch = FirstImport("agentflow_no_such_package")
    sys.meta_path.insert(0, watch)
    try:
        with pytest.raises(ModuleNotFoundError):
            import agentflow_no_such_package  # noqa: F401
    finally:
        sys.meta_path.remove(watch)
    assert "test_core_tier.py" in watch.imported_by()
    assert "import agentflow_no_such_package" in watch.imported_by()
