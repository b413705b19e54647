"""What ``--help`` says: every command and action describes itself, ``compare`` names
what it shares with ``run`` as ``run`` does, and ``run`` ends with examples that parse."""

from __future__ import annotations

import argparse
import shlex

import pytest

from agentflow_eval.cli.commands import build_parser
from agentflow_eval.cli.run import EXAMPLES


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _metavars(parser: argparse.ArgumentParser) -> dict[str, str | tuple[str, ...] | None]:
    return {
        option: action.metavar
        for action in parser._actions
        if action.nargs != 0  # flags without a value have no metavar
        for option in action.option_strings
    }


def test_every_command_and_eval_set_action_has_a_description() -> None:
    commands = _subparsers(build_parser())
    missing = [name for name, parser in commands.items() if not parser.description]
    actions = _subparsers(commands["eval-set"])
    missing += [f"eval-set {name}" for name, parser in actions.items() if not parser.description]
    assert missing == []


def test_compare_names_the_options_it_shares_with_run_as_run_does() -> None:
    commands = _subparsers(build_parser())
    run, compare = _metavars(commands["run"]), _metavars(commands["compare"])
    shared = sorted(set(run) & set(compare))
    assert "--publish-to" in shared and "--alpha" in shared
    assert {o: compare[o] for o in shared} == {o: run[o] for o in shared}
    # and nothing of compare's is argparse's stand-in (the dest in capitals)
    defaulted = [
        a.dest
        for a in commands["compare"]._actions
        if a.nargs != 0 and a.choices is None and a.metavar is None
    ]
    assert defaulted == []


@pytest.mark.parametrize(
    "line",
    [ln.strip() for ln in EXAMPLES.replace("\\\n", " ").splitlines() if "agentflow-eval" in ln],
)
def test_runs_help_ends_with_examples_that_parse(line: str) -> None:
    args = build_parser().parse_args(shlex.split(line)[1:])
    assert args.command == "run"


def test_runs_help_shows_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    shown = capsys.readouterr().out
    assert shown.rstrip().endswith(EXAMPLES.rstrip())
    assert "\nexamples:\n  agentflow-eval run my_agent.py:agent" in shown
