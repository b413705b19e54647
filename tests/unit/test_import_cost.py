"""The collector pause around big imports (agentflow_eval/import_cost.py)."""

from __future__ import annotations

import gc
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from types import ModuleType

import pytest

from agentflow_eval.import_cost import import_paused, paused_collection


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_in_the_block_and_resumed_after(collector_on: None) -> None:
    with paused_collection():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_is_resumed_after_an_error(collector_on: None) -> None:
    with pytest.raises(RuntimeError), paused_collection():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_pause_inside_a_pause_leaves_the_resume_to_the_outer_one(collector_on: None) -> None:
    with paused_collection():
        with paused_collection():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_process_turned_off_stays_off(collector_on: None) -> None:
    gc.disable()
    with paused_collection():
        pass
    assert not gc.isenabled()


class _Probe(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A module of its own whose code notes whether the collector runs as it executes."""

    NAME = "agentflow_import_cost_probe"

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name == self.NAME else None

    def exec_module(self, module: ModuleType) -> None:
        self.seen.append(gc.isenabled())


def test_a_module_is_imported_with_the_collector_paused(collector_on: None) -> None:
    probe = _Probe()
    sys.meta_path.insert(0, probe)
    try:
        module = import_paused(_Probe.NAME)
        assert probe.seen == [False]  # its code ran with the collector off
        assert gc.isenabled()  # and it runs again once the import returns
        assert import_paused(_Probe.NAME) is module
        assert probe.seen == [False]  # imported once
    finally:
        sys.meta_path.remove(probe)
        sys.modules.pop(_Probe.NAME, None)


def test_a_loaded_module_is_returned_as_it_is(collector_on: None) -> None:
    assert import_paused("json") is sys.modules["json"]
    assert gc.isenabled()


def test_freeze_moves_what_the_process_holds_out_of_the_collectors_reach(
    collector_on: None,
) -> None:
    gc.unfreeze()
    try:
        with paused_collection(freeze=True):
            held = [object() for _ in range(10)]
        assert gc.get_freeze_count() > len(held)
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_without_freeze_nothing_is_frozen(collector_on: None) -> None:
    gc.unfreeze()
    with paused_collection():
        pass
    assert gc.get_freeze_count() == 0
