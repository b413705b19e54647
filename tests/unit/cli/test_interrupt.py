"""Ctrl-C during a run: the run's coroutine is cancelled (so the flow winds down and
records it), the console is quiet from then on, and the caller gets KeyboardInterrupt."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import threading

import pytest

from agentflow_eval.cli.interrupt import run_interruptibly


@pytest.fixture
def console() -> io.StringIO:
    """A console handler on the root logger, as Prefect installs one. Afterwards every
    root handler gets its filters back: an interrupted run keeps the console quiet for
    the rest of its process, and this process goes on (pytest's own handlers included)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    before = {h: list(h.filters) for h in root.handlers}
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)
    for other, filters in before.items():
        other.filters[:] = filters


def test_ctrl_c_cancels_the_run_and_quiets_the_console(console: io.StringIO) -> None:
    seen: list[str] = []

    async def the_run() -> None:
        logging.getLogger("prefect.flow_runs").error("before the interrupt")
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            logging.getLogger("prefect.flow_runs").error("Crash detected! while winding down")
            raise

    handler_before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(the_run)
    assert seen == ["cancelled"]
    assert "before the interrupt" in console.getvalue()
    assert "Crash detected" not in console.getvalue()
    assert signal.getsignal(signal.SIGINT) is handler_before
    for handler in logging.getLogger().handlers:  # quiet for good: shutdown logs too
        if isinstance(handler, logging.StreamHandler) and handler.stream is console:
            assert handler.filters


def test_without_ctrl_c_the_result_comes_back_and_nothing_is_filtered(
    console: io.StringIO,
) -> None:
    async def the_run() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_interruptibly(the_run) == 42
    logging.getLogger("prefect.flow_runs").error("after the run")
    assert "after the run" in console.getvalue()


def test_other_errors_pass_through(console: io.StringIO) -> None:
    async def the_run() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        run_interruptibly(the_run)
