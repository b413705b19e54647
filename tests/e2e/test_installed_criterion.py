"""A criterion an installed package declares as an ``agentflow_eval.criteria`` entry point
needs nothing else: a fresh interpreter (the registry reads its entry points when first
asked) knows it, reads its options with its own model (typos named), puts it in the
config schema and the hints, and checks it before a run, as it does a built-in one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


NEW_CRITERION = '''
"""``mentions_state``: an LLM judge of the answer against the final session state."""

from dataclasses import dataclass

from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.judges.options import JudgeCriterionOptions
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.models.config import EvalConfig


class MentionsStateOptions(JudgeCriterionOptions):
    """Options of mentions_state."""

    keys: list[str] = []
    """The state keys to look for."""


@dataclass
class MentionsState:
    name: str
    threshold: float
    label: str = "mentions state"

    async def evaluate(self, ctx: CriterionContext):
        return scored(self, 1.0)


@criterion(
    "mentions_state",
    MentionsStateOptions,
    judges=("final_session_state", "rubrics"),
    needs_rubrics=True,
)
def mentions_state(name: str, options: MentionsStateOptions, config: EvalConfig) -> MentionsState:
    """Whether the answer mentions the state's keys."""
    return MentionsState(name, options.threshold or 1.0)
'''

PROBE = """
import json, sys
from pathlib import Path

from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.config_schema import config_json_schema
from agentflow_eval.criteria.coverage import judge_hint
from agentflow_eval.criteria.registry import known_criteria, known_llm_criteria
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.models.evalset import EvalSet
from agentflow_eval.run.inputs import check_criteria

config_file = Path(sys.argv[1]) / "config.json"
config_file.write_text(json.dumps({"criteria": {"mentions_state": {"keyz": ["a"]}}}))
try:
    load_config(config_file)
    typo = None
except EvalFileError as exc:
    typo = str(exc).split(": ", 1)[1]
config_file.write_text(json.dumps({"criteria": {"mentions_state": {"keys": ["a"]}}}))
config = load_config(config_file)
eval_set = EvalSet.model_validate(
    {"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": "hi"}]}]}
)
try:
    check_criteria(config, config_file, eval_set)
    rubrics = None
except EvalFileError as exc:
    rubrics = exc.message
print(json.dumps({
    "known": "mentions_state" in known_criteria(),
    "judge": "mentions_state" in known_llm_criteria(),
    "schema": "mentions_state" in config_json_schema()["properties"]["criteria"]["properties"],
    "keys": type(config.criteria["mentions_state"]).__name__,
    "typo": typo,
    "hint": judge_hint("final_session_state"),
    "rubrics": rubrics,
}))
"""


def test_a_criterion_an_installed_package_declares_needs_nothing_else(tmp_path: Path):
    (tmp_path / "state_checks.py").write_text(textwrap.dedent(NEW_CRITERION), "utf-8")
    dist_info = tmp_path / "state_checks-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: state-checks\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        "[agentflow_eval.criteria]\nmentions_state = state_checks:mentions_state\n"
    )
    environ = {**os.environ, "PYTHONPATH": str(tmp_path)}  # where the package is installed
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=environ,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "known": True,
        "judge": True,
        "schema": True,
        "keys": "MentionsStateOptions",
        "typo": "criteria.mentions_state.keyz: unknown field; did you mean 'keys'?",
        "hint": "add final_session_state_match or mentions_state to the config's criteria",
        "rubrics": "criterion 'mentions_state' has no rubrics to judge, so it could never "
        "pass or fail: give 'rubrics' in this criterion, in the cases or in their turns, "
        "or remove it",
    }
