"""The end-to-end tier's start order names units that exist: a renamed module or page
would otherwise drop silently to the back of the queue and lengthen the tier."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.e2e_schedule import SPLIT, UNIT_SECONDS, unit_of

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"


@pytest.mark.parametrize("unit", sorted(UNIT_SECONDS))
def test_every_measured_unit_is_a_module_or_a_page_of_the_tier(unit: str) -> None:
    module, _, page = unit.partition("[")
    source = E2E / module
    assert source.is_file(), f"{unit}: tests/e2e/{module} does not exist"
    if page:
        assert module in SPLIT, f"{unit}: {module} is not split into units per test"
        name = page.removesuffix("]")
        # the page is a parameter of the module's test and a page of the documentation
        quoted = rf"[\"']{re.escape(name)}[\"']"
        assert re.search(quoted, source.read_text(encoding="utf-8")), (
            f"{unit}: not a page {module} runs"
        )
        assert (ROOT / "docs" / name).is_file(), f"{unit}: docs/{name} does not exist"


def test_a_split_module_makes_a_unit_of_each_test_and_others_one_of_the_module() -> None:
    docs = "tests/e2e/test_docs.py::test_every_block_of_the_page_runs[frameworks/adk.md]"
    assert unit_of(docs) == "test_docs.py[frameworks/adk.md]"
    assert unit_of("tests/e2e/test_scale_out.py::test_shards[a-b]") == "test_scale_out.py"
    assert unit_of("tests/e2e/test_docs.py::test_unparametrized") == "test_docs.py"
