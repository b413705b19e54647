"""``agentflow-eval init [DIR]``: a starter project to evaluate (an agent with one tool
that runs offline on the demo model, an eval set with a case of each kind, its config, a
pytest test, a README). Refuses, writing nothing, when any of its files exists."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentflow_eval.cli.common import EXIT_OK, fail, one_line, terminal_text
from agentflow_eval.errors import InputError
from agentflow_eval.files.starter_project import write_starter

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "init",
        help="make a starter project: an agent, an eval set, a config, a pytest test",
        description="Make a starter project in DIR: an agent with one tool that runs "
        "offline on the demo model, an eval set with a final-answer, a tool-trajectory and "
        "a multi-turn case, its config, a pytest test and a README. Existing files are "
        "never overwritten.",
    )
    parser.add_argument(
        "folder", nargs="?", default=".", metavar="DIR", help="where to write (default: here)"
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    try:
        written = write_starter(folder)
    except InputError as exc:
        return fail(one_line(exc))
    except OSError as exc:
        return fail(one_line(exc))
    for path in written:
        print(terminal_text(str(path)))
    evalset = Path("evals") / "starter.evalset.json"
    where = "" if folder == Path(".") else f"cd {folder} && "
    print(
        terminal_text(
            f"next: {where}agentflow-eval run agent.py:agent {evalset}   (or: pytest tests)"
        )
    )
    return EXIT_OK
