"""The ``agentflow-eval`` command: one module per subcommand.

    agentflow-eval run AGENT EVALSET [options]     evaluate an agent on an eval set (alias: eval)
    agentflow-eval rejudge RUN_DIR [--config F]    judge a finished run's trials again
    agentflow-eval traces score SOURCE --config F  score production traces (OTLP JSON)
    agentflow-eval report RUN_DIR|RESULTS [-o F]   re-render an earlier run's report
    agentflow-eval publish RUN_DIR [--to TARGET]   publish a run folder
    agentflow-eval schema [-o DIR]                 write the JSON Schemas of input files
    agentflow-eval eval-set create|add|validate|convert ...
                                                   make, grow, check, convert eval sets
    agentflow-eval init [DIR]                      make a starter project to evaluate
    agentflow-eval view [OUTPUT_DIR] [--serve]     open the newest report; serve every run
    agentflow-eval review RUN_DIR [--size N]       label a run's judged trials at the terminal
    agentflow-eval review RUN_DIR --labels FILE    import people's labels, measure the judges

Each command module offers ``add_parser(subparsers)`` and ``run(args) -> int`` (the run
commands, ``run(args, early)``: :mod:`.early` started what they need before the command's
imports, which :mod:`.commands` holds). Exit
codes: 0 ok (``run`` is report-only by default), 1 below a gate the user set, 2 bad input
(one line naming file, case and field, or the flag), 3 a run that could not go on, 130
stopped by Ctrl-C.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Sequence

from agentflow_eval.cli.common import EXIT_OK, fail
from agentflow_eval.cli.early import start_early
from agentflow_eval.errors import InputError
from agentflow_eval.import_cost import paused_collection

__all__ = ["console", "main"]


def main(argv: Sequence[str] | None = None, *, owns_process: bool = False) -> int:
    """Run the command ``argv`` (default: this process's arguments); its exit code.
    ``owns_process``: the process is the command's alone (the executable), so what it
    imports may be frozen out of the garbage collector's reach (see
    :mod:`agentflow_eval.import_cost`)."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        early = start_early(words, os.environ, owns_process=owns_process)
    except InputError as exc:  # a resumed folder another process holds
        return fail(str(exc))
    try:
        # the command graph (SciPy, pydantic's models, the commands) loads while the
        # server launched above boots
        with paused_collection(freeze=owns_process):
            from agentflow_eval.cli.commands import dispatch

        return dispatch(words, early)
    finally:
        early.release()


def console() -> None:
    """The ``agentflow-eval`` executable: :func:`main`, then an exit that skips tearing
    the interpreter down.

    Exit goes as usual — Prefect's workers drain, the ``atexit`` handlers run (the
    temporary Prefect server stops) — up to the last handler, which this registers
    first: it flushes logging and the standard streams and ends the process, sparing the
    time Python spends freeing every module and object of a run. Files are closed by then
    (every writer here closes its file). An exception or ``SystemExit`` from :func:`main`
    (argparse's usage errors) exits the usual way.
    """
    exit_code: list[int] = []

    def end_process() -> None:
        if exit_code:
            import logging

            logging.shutdown()
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):  # closed, or a broken pipe
                    stream.flush()
            os._exit(exit_code[0])

    atexit.register(end_process)
    exit_code.append(main(owns_process=True))
    sys.exit(exit_code[0] if exit_code else EXIT_OK)
