"""Fault matrix, area 7 (the part without processes) — hostile ids and printed links.

Ids become local folder names that never collide (``../../etc`` and ``etc``; ``..``,
blanks and ``unnamed``) and never leave the output folder; printed to a terminal they
cannot run escape sequences (ESC, NUL, CR, C1 controls, bidirectional overrides are
shown escaped); links to path-style or IP endpoints are path-style. (The temporary
server's death with the CLI is tests/e2e/test_faults_cli.py.)
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentflow_eval.files.naming import distinct_safe_id, printable, safe_id
from agentflow_eval.run.plan import RunPaths
from agentflow_eval.storage.keys import key_part
from agentflow_eval.storage.s3 import S3Store
from agentflow_eval.storage.targets import S3Target

HOSTILE_IDS = [
    "etc",
    "../../etc",
    "..",
    "   ",
    "",
    "unnamed",
    "a/b",
    "a_b",
    "a b",
    "a\x00b",
    "\x1b[2J\x1b[31mred",
    "CON",
    "ünïcödé",
    "x" * 300,
    "x" * 301,
]


def test_different_ids_never_share_a_folder_name() -> None:
    names = [distinct_safe_id(value) for value in HOSTILE_IDS]
    assert len(set(names)) == len(HOSTILE_IDS)
    for name in names:
        assert name == safe_id(name)  # only safe characters
        assert not name.startswith((".", "-")) and ".." not in name and len(name) <= 80
    assert distinct_safe_id("etc") == "etc"  # a safe id stays as it is
    assert distinct_safe_id("weather-v2.1") == "weather-v2.1"


def test_folder_names_and_object_keys_follow_one_rule() -> None:
    for value in HOSTILE_IDS:
        assert distinct_safe_id(value, max_length=100) == key_part(value)


def test_a_run_folder_stays_inside_the_output_folder(tmp_path: Path) -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    folders = {value: RunPaths.new(tmp_path, value, "r1", started).run_dir for value in HOSTILE_IDS}
    assert len({folder.parent for folder in folders.values()}) == len(HOSTILE_IDS)
    for folder in folders.values():
        assert folder.resolve().is_relative_to(tmp_path.resolve())
        assert folder.parent.parent == tmp_path


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("case\x1b[31m", "case\\x1b[31m"),
        ("nul\x00byte", "nul\\x00byte"),
        ("over\rwrite", "over\\rwrite"),
        ("tab\there", "tab\\there"),
        ("bell\x07", "bell\\x07"),
        ("c1\x9b31m", "c1\\x9b31m"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("plain ünïcödé ✓", "plain ünïcödé ✓"),
    ],
)
def test_ids_are_printed_with_control_characters_escaped(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_newlines_stay_in_messages_and_not_in_ids() -> None:
    assert printable("line one\nline two") == "line one\nline two"
    assert printable("an\nid", keep_newlines=False) == "an\\nid"


@pytest.mark.parametrize(
    ("endpoint", "path_style", "link"),
    [
        ("http://127.0.0.1:8333", False, "http://127.0.0.1:8333/runs/p/r/report.html"),
        ("http://[::1]:9000", False, "http://[::1]:9000/runs/p/r/report.html"),
        ("http://localhost:9000", False, "http://localhost:9000/runs/p/r/report.html"),
        ("https://minio.example.com", True, "https://minio.example.com/runs/p/r/report.html"),
        ("https://s3.example.com", False, "https://runs.s3.example.com/p/r/report.html"),
    ],
)
def test_links_to_path_style_and_ip_endpoints_are_path_style(
    endpoint: str, path_style: bool, link: str
) -> None:
    target = S3Target(bucket="runs", prefix="p", endpoint_url=endpoint, path_style=path_style)
    assert S3Store(target).url("r/report.html") == link
