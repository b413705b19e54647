"""A criterion an installed package declares as an ``agentflow_eval.criteria`` entry point
is a criterion like a built-in one: known, its options checked when a config loads, in
the config's schema and the hints, built and judged; and ``register_criterion`` is the
same call from Python. A broken entry point is named with its package."""

from __future__ import annotations

from pathlib import Path

import pytest
from criteria_helpers import case, context, invocation, trial, turn
from support.installed_package import installed_package

import agentflow_eval
from agentflow_eval.criteria.builtins import BUILTIN_CRITERIA
from agentflow_eval.criteria.config_files import load_config
from agentflow_eval.criteria.config_schema import config_json_schema
from agentflow_eval.criteria.coverage import judge_hint
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.registry import (
    CRITERIA,
    ENTRY_POINT_GROUP,
    build_criteria,
    known_criteria,
    register,
    spec_of,
)
from agentflow_eval.criteria.spec import criterion
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.registries import EntryPointError

NO_PII = '''
from dataclasses import dataclass

from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.options import CriterionOptions
from agentflow_eval.criteria.spec import criterion


class NoPiiOptions(CriterionOptions):
    """Options of no_pii."""

    words: list[str] = []
    """What the answer must not say."""


@dataclass
class NoPii:
    name: str
    threshold: float
    words: list[str]
    label: str = "no PII"

    async def evaluate(self, ctx: CriterionContext):
        answer = ctx.trial.final_response or ""
        return scored(self, 0.0 if any(w in answer for w in self.words) else 1.0)


@criterion("no_pii", NoPiiOptions, judges=("expected_final_response",))
def no_pii(name, options: NoPiiOptions, config):
    """The answer says none of the given words."""
    return NoPii(name, options.threshold or 1.0, options.words)


misnamed = no_pii
not_a_criterion = "no_pii"
'''


def _pii_package(tmp_path: Path, points: dict[str, str]):
    return installed_package(
        tmp_path / "site",
        "pii-checks",
        entry_points={ENTRY_POINT_GROUP: points},
        modules={"pii_checks.py": NO_PII},
        reload=[CRITERIA],
    )


async def test_an_installed_packages_criterion_is_one_like_the_built_ins(tmp_path: Path):
    assert "no_pii" not in known_criteria()
    with _pii_package(tmp_path, {"no_pii": "pii_checks:no_pii"}):
        assert "no_pii" in known_criteria()
        spec = spec_of("no_pii")
        assert spec is not None and spec.options.__name__ == "NoPiiOptions"
        # its options are read by its own model when a config loads
        config_file = tmp_path / "config.json"
        config_file.write_text('{"criteria": {"no_pii": {"wordz": ["555"]}}}')
        with pytest.raises(EvalFileError, match=r"criteria\.no_pii\.wordz: unknown field"):
            load_config(config_file)
        config_file.write_text('{"criteria": {"no_pii": {"words": ["555"]}}}')
        config = load_config(config_file)
        assert type(config.criteria["no_pii"]).__name__ == "NoPiiOptions"
        # the schema and the hints know it
        schema = config_json_schema()["properties"]["criteria"]["properties"]
        assert schema["no_pii"]["description"] == "The answer says none of the given words."
        assert "no_pii" in judge_hint("expected_final_response")
        # and it judges
        judged = case(invocation())
        (built,) = build_criteria(config, judged)
        leaked = await built.evaluate(context(judged, trial(turn(final="call 555-0100")), config))
        kept = await built.evaluate(context(judged, trial(turn(final="I cannot say")), config))
        assert (leaked.status, kept.status) == ("failed", "passed")
    assert "no_pii" not in known_criteria()  # gone with its package


def test_an_entry_point_replaces_the_built_in_of_its_name(tmp_path: Path):
    package = installed_package(
        tmp_path / "site",
        "stricter-completes",
        entry_points={ENTRY_POINT_GROUP: {"completes": "stricter:completes"}},
        modules={
            "stricter.py": """
                from agentflow_eval.criteria.expectations import build_completes
                from agentflow_eval.criteria.spec import CriterionSpec

                completes = CriterionSpec(
                    "completes", build_completes.options, build_completes.build,
                    description="Stricter.",
                )
            """
        },
        reload=[CRITERIA],
    )
    with package:
        spec = spec_of("completes")
        assert spec is not None and spec.description == "Stricter."
    spec = spec_of("completes")
    assert spec is not None and spec in BUILTIN_CRITERIA


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("pii_checks:misnamed", "names the criterion 'no_pii'; the entry point's name must be"),
        ("pii_checks:not_a_criterion", "names a str; a criterion is declared there as a"),
        ("pii_checks:missing", "cannot be loaded: AttributeError"),
        ("pii_nowhere:no_pii", "cannot be loaded: ModuleNotFoundError"),
    ],
)
def test_a_broken_entry_point_is_named_with_its_package(tmp_path: Path, value: str, problem: str):
    with _pii_package(tmp_path, {"other_name" if "misnamed" in value else "no_pii": value}):
        with pytest.raises(EntryPointError) as caught:
            known_criteria()
        assert problem in str(caught.value)
        assert "(pii-checks 1.0, group agentflow_eval.criteria)" in str(caught.value)
    assert "completes" in known_criteria()  # read again without it


class ShoutOptions(CriterionOptions):
    """Options of shouts."""


def test_register_criterion_takes_a_declaration_or_a_name(tmp_path: Path):
    assert agentflow_eval.register_criterion is register

    @criterion("test_shouts", ShoutOptions)
    def shouts(name, options, config):
        """The answer is in capitals."""
        raise AssertionError("not built here")

    try:
        assert register(shouts) is shouts
        assert spec_of("test_shouts") is shouts
        config_file = tmp_path / "config.json"
        config_file.write_text('{"criteria": {"test_shouts": {"loud": true}}}')
        with pytest.raises(EvalFileError, match=r"criteria\.test_shouts\.loud: unknown field"):
            load_config(config_file)
        CRITERIA.reload()  # what the process registered outlives a new reading
        assert spec_of("test_shouts") is shouts

        @register("test_whispers")
        def whispers(name, options, config):
            """The answer is in lower case."""
            raise AssertionError("not built here")

        spec = spec_of("test_whispers")
        assert spec is not None and spec.build is whispers
        assert spec.description == "The answer is in lower case."
    finally:
        CRITERIA.remove("test_shouts")
        CRITERIA.remove("test_whispers")
    assert spec_of("test_shouts") is None
