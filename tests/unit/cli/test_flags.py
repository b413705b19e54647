"""Every bad flag value is one line on stderr, exit 2, before anything starts: no usage
dump, no pydantic dump, no traceback.

The command runs in this process, as far as its checks of flags and inputs go; a Prefect
API is named (a closed port), so no server is launched and none is reached before the
checks pass. The same from a process of its own, as a shell sees it:
tests/e2e/test_commands.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentflow_eval.cli import main
from agentflow_eval.cli.commands import build_parser

ROOT = Path(__file__).resolve().parents[3]
EVALSET = str(ROOT / "examples/weather/weather.evalset.json")
AGENT = "examples.weather.agent:agent"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--runs", "0"], "argument --runs: must be at least 1, got 0"),
        (["--runs", "many"], "argument --runs: expected a whole number, got 'many'"),
        (
            ["--timeout", "0"],
            "argument --trial-timeout-s/--timeout: must be a number above 0, got 0",
        ),
        (
            ["--timeout", "-5"],
            "argument --trial-timeout-s/--timeout: must be a number above 0, got -5",
        ),
        (["--max-concurrency", "0"], "argument --max-concurrency: must be at least 1, got 0"),
        (["--limit", "0"], "argument --limit: must be at least 1, got 0"),
        (
            ["--fail-under", "120%"],
            "argument --min-pass-rate/--fail-under: must be a rate between 0 and 1",
        ),
        (
            ["--fail-under", "most"],
            "argument --min-pass-rate/--fail-under: expected a rate such as 0.8 or 80%",
        ),
        (["--json", "--quiet"], "argument -q/--quiet: not allowed with argument --json"),
        (["--resume", "a", "--rerun-errored", "b"], "not allowed with argument --resume"),
    ],
)
def test_a_bad_flag_value_is_one_line(cli, flags: list[str], message: str) -> None:
    result = cli("run", AGENT, EVALSET, *flags)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("agentflow-eval run: error: ")
    assert message in lines[0]
    assert lines[0].endswith("(see agentflow-eval run --help)")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("s3://A_B/x", "publish_to s3://A_B/x: bucket 'A_B' is not a valid S3 bucket name"),
        ("s3://", "publish_to s3://: bucket '' is not a valid S3 bucket name"),
        ("ftp://host/x", "scheme 'ftp' is not supported"),
    ],
)
def test_a_bad_publish_target_is_refused_before_the_run(cli, target: str, message: str) -> None:
    result = cli("run", AGENT, EVALSET, "--publish-to", target)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("agentflow-eval: error: ")


def test_a_case_pattern_that_matches_nothing_names_the_cases(cli, tmp_path: Path) -> None:
    result = cli("run", AGENT, EVALSET, "--case", "hotel_*", "--output", str(tmp_path / "o"))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "agentflow-eval: error: no case of eval set 'weather_agent_basic_tests' matches "
        "'hotel_*'; its cases: weather_lookup_simple, weather_lookup_multi_city"
    )
    assert not (tmp_path / "o").exists()


def test_a_scenario_without_a_simulator_is_a_load_time_error(cli, tmp_path: Path) -> None:
    evalset = tmp_path / "scenarios.evalset.json"
    evalset.write_text(
        '{"eval_set_id": "s", "eval_cases": [{"eval_id": "refund", "conversation_scenario": '
        '{"starting_prompt": "Refund me", "conversation_plan": "Ask for a refund."}}]}'
    )
    result = cli("run", AGENT, str(evalset), "--output", str(tmp_path / "o"))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"agentflow-eval: error: {evalset}: case 'refund': conversation_scenario: a "
        "simulated-user scenario needs user_simulator_config in the config (none was given)"
    )
    assert result.stderr.count("\n") == 1 and not (tmp_path / "o").exists()


def test_every_subcommand_reports_usage_errors_in_one_line(cli) -> None:
    for args in (["run", "--bogus"], ["report"], ["publish"], ["frobnicate"]):
        result = cli(*args)
        assert result.returncode == 2
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "(see agentflow-eval" in result.stderr


def test_the_parser_offers_every_flag_the_docs_name() -> None:
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    flags = {option for action in run._actions for option in action.option_strings}
    for flag in (
        "--case", "--limit", "--rerun-errored", "--quiet", "--json", "--full", "--resume",
        "--fail-under", "--publish-to", "--verbose",
    ):  # fmt: skip
        assert flag in flags


def test_version_prints_the_packages_version(capsys) -> None:
    from agentflow_eval.version import __version__

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"agentflow-eval {__version__}\n"


def test_an_os_error_is_said_as_the_tool_says_things() -> None:
    from agentflow_eval.cli.common import one_line

    error = FileNotFoundError(2, "No such file or directory", "/data/x.json")
    assert one_line(error) == "/data/x.json: no such file or directory"


def test_every_subcommand_has_a_description_and_every_flag_its_help() -> None:
    import argparse

    from agentflow_eval.cli.commands import build_parser

    def parsers(parser: argparse.ArgumentParser, path: str):  # type: ignore[no-untyped-def]
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    yield from parsers(child, f"{path} {name}")

    missing = []
    for path, parser in parsers(build_parser(), "agentflow-eval"):
        # a command needs a description (an action's help line describes it)
        if path.count(" ") == 1 and not (parser.description or "").strip():
            missing.append(f"{path}: no description")
        for action in parser._actions:
            if not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(f"{path}: {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
