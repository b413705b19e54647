"""A registry reads its built-ins and its entry-point group once, when first asked; what a
process adds itself comes first whenever it was added; a name is one thing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.installed_package import installed_package

from agentflow_eval.registries import EntryPointError, Registry

GROUP = "agentflow_eval_tests.words"


class Counted:
    """Built-ins that count how often they were read."""

    def __init__(self, *words: str, wait: threading.Event | None = None) -> None:
        self.words = words
        self.reads = 0
        self.wait = wait
        self.started = threading.Event()

    def __call__(self) -> tuple[str, ...]:
        self.reads += 1
        self.started.set()
        if self.wait is not None:
            self.wait.wait(5)
        return self.words


def words(builtins: Counted) -> Registry[str]:
    return Registry(what="word", group=GROUP, kind=str, name_of=str.lower, builtins=builtins)


def test_built_ins_are_read_when_first_asked_and_once() -> None:
    builtins = Counted("Alpha", "Beta")
    registry = words(builtins)
    assert builtins.reads == 0
    assert registry.names() == ["alpha", "beta"]
    assert registry.get("beta") == "Beta" and registry.get("gamma") is None
    assert builtins.reads == 1
    registry.reload()
    assert registry.names() == ["alpha", "beta"] and builtins.reads == 2


def test_what_the_process_adds_comes_first_whenever_it_was_added() -> None:
    registry = words(Counted("Alpha", "Beta"))
    registry.add("ALPHA")  # before the built-ins were read
    assert registry.get("alpha") == "ALPHA"
    assert registry.items() == ["ALPHA", "Beta"]  # the latest first
    registry.add("Gamma")
    assert registry.items() == ["Gamma", "ALPHA", "Beta"]
    registry.reload()
    assert registry.get("alpha") == "ALPHA"
    registry.remove("alpha")
    assert registry.get("alpha") == "Alpha"


def test_another_thread_waits_for_the_whole_reading() -> None:
    release = threading.Event()
    builtins = Counted("Alpha", "Beta", wait=release)
    registry = words(builtins)
    seen: list[list[str]] = []
    reader = threading.Thread(target=lambda: seen.append(registry.names()))
    reader.start()
    assert builtins.started.wait(5)
    other = threading.Thread(target=lambda: seen.append(registry.names()))
    other.start()
    other.join(0.1)
    assert other.is_alive() and seen == []  # waiting for the reading, not served half of it
    release.set()
    reader.join(5)
    other.join(5)
    assert seen == [["alpha", "beta"], ["alpha", "beta"]] and builtins.reads == 1


def test_a_reading_that_fails_is_tried_again() -> None:
    calls: list[int] = []

    def flaky() -> tuple[str, ...]:
        calls.append(1)
        if len(calls) == 1:
            raise ImportError("not yet")
        return ("Alpha",)

    registry: Registry[str] = Registry(
        what="word", group=GROUP, kind=str, name_of=str.lower, builtins=flaky
    )
    with pytest.raises(ImportError):
        registry.names()
    assert registry.names() == ["alpha"] and len(calls) == 2


PACKAGE = """
GAMMA = "Gamma"
ALPHA = "ALPHA"
"""


def test_entry_points_are_read_once_and_replace_built_ins(tmp_path: Path) -> None:
    registry = words(Counted("Alpha", "Beta"))
    assert registry.names() == ["alpha", "beta"]
    package = installed_package(
        tmp_path / "site",
        "more-words",
        entry_points={GROUP: {"gamma": "more_words:GAMMA", "alpha": "more_words:ALPHA"}},
        modules={"more_words.py": PACKAGE},
    )
    with package:
        assert registry.names() == ["alpha", "beta"]  # read before it was installed
        registry.reload()
        assert registry.names() == ["alpha", "beta", "gamma"]
        assert registry.get("alpha") == "ALPHA"
    assert registry.get("gamma") == "Gamma"  # read while it was there
    registry.reload()
    assert registry.names() == ["alpha", "beta"]


def test_two_packages_declaring_one_name_are_refused(tmp_path: Path) -> None:
    registry = words(Counted())
    first = installed_package(
        tmp_path / "one",
        "words-one",
        entry_points={GROUP: {"gamma": "words_one:GAMMA"}},
        modules={"words_one.py": PACKAGE},
    )
    second = installed_package(
        tmp_path / "two",
        "words-two",
        entry_points={GROUP: {"gamma": "words_two:GAMMA"}},
        modules={"words_two.py": PACKAGE},
    )
    with first, second, pytest.raises(EntryPointError) as caught:
        registry.names()
    message = str(caught.value)
    assert "both declare the word 'gamma'; uninstall one of them" in message
    assert "words-one 1.0" in message and "words-two 1.0" in message
