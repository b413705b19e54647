"""A folder as a listing store: what it lists (and in which order), what it opens, and a
create that only one of many racing writers wins."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentflow_eval.errors import StoreError
from agentflow_eval.storage.base import ListingStore
from agentflow_eval.storage.local import LocalStore


def _write(root: Path, key: str, body: bytes = b"x") -> None:
    path = root / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)


def test_a_folder_lists_its_files_in_the_keys_lexicographic_order(tmp_path: Path) -> None:
    keys = ["p-a", "p/a/b", "p/k0", "p/k1", "p0", "q/year=2024/x.json", "a"]
    for key in keys:
        _write(tmp_path, key, key.encode())
    _write(tmp_path, "p/.half-written.tmp")
    store = LocalStore(tmp_path)
    assert isinstance(store, ListingStore)
    listed = list(store.list_objects())
    assert [o.key for o in listed] == sorted(keys)
    assert {o.key: o.size for o in listed}["q/year=2024/x.json"] == len("q/year=2024/x.json")
    assert [o.key for o in store.list_objects("p/")] == ["p/a/b", "p/k0", "p/k1"]
    assert [o.key for o in store.list_objects("p")] == ["p-a", "p/a/b", "p/k0", "p/k1", "p0"]
    assert [o.key for o in store.list_objects("p/k")] == ["p/k0", "p/k1"]
    assert list(store.list_objects("nothing/here")) == []


def test_a_listed_key_opens_as_it_was_named_and_nothing_outside_the_folder_does(
    tmp_path: Path,
) -> None:
    _write(tmp_path / "in", "year=2024/t.json", b"{}")
    (tmp_path / "secret").write_bytes(b"no")
    store = LocalStore(tmp_path / "in")
    stream = store.open_listed("year=2024/t.json")
    assert stream is not None
    with stream:
        assert stream.read() == b"{}"
    assert store.open_listed("year=2024/gone.json") is None
    for bad in ("../secret", "/etc/passwd", "a//b", ""):
        with pytest.raises(StoreError):
            store.open_listed(bad)


def test_of_writers_racing_to_create_one_key_exactly_one_wins(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    start = threading.Barrier(8)
    won: list[bytes] = []

    def claim(n: int) -> None:
        start.wait()
        if store.create("claims/k", f"writer {n}".encode(), "application/json"):
            won.append(f"writer {n}".encode())

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert store.get("claims/k") == won[0]
    assert not store.create("claims/k", b"late", "application/json")
    assert store.get("claims/k") == won[0]
    assert [o.key for o in store.list_objects()] == ["claims/k"]  # no temporary file left
