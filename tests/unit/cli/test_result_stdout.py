"""While a run command runs, descriptor 1 is stderr and the real stdout is kept for the
command's result; afterwards, descriptor 1 is stdout again."""

from __future__ import annotations

import io
import os
import sys

import pytest

from agentflow_eval.cli.result_stdout import reserve_stdout


def test_fd_1_goes_to_stderr_and_the_result_to_the_real_stdout(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # sys.stdout as a process starts with it: a text stream over descriptor 1
    fd_1 = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", fd_1)
    reserved = reserve_stdout()
    try:
        os.write(1, b"native bytes\n")
        print("a stray print", flush=True)  # sys.stdout over descriptor 1
        print('{"result": 1}', file=reserved.stream)
    finally:
        reserved.release()
    os.write(1, b"after\n")
    out, err = capfd.readouterr()
    assert out == '{"result": 1}\nafter\n'
    assert err == "native bytes\na stray print\n"


def test_a_replaced_sys_stdout_gets_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    reserved = reserve_stdout()
    try:
        assert reserved.stream is sys.stdout  # pytest's: where the caller reads it
        print("the result", file=reserved.stream)
    finally:
        reserved.release()
    assert capsys.readouterr().out == "the result\n"
