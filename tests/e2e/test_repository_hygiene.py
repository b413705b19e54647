"""The project stands on its own: nothing it ships or documents points at planning
documents outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"\bthe seed'?s?\b|\bseeds?[ /]0\d\d|\.\./shared|§\s?\d", re.IGNORECASE)


def test_no_reference_to_documents_outside_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    texts = [
        path
        for path in tracked
        if path.endswith((".py", ".md", ".j2", ".yaml", ".yml", ".toml", ".txt", ".sh"))
        and not path.startswith("tests/fixtures/")
        and path != "tests/e2e/test_repository_hygiene.py"
    ]
    assert len(texts) > 100
    found = [
        f"{path}:{number}: {line.strip()}"
        for path in texts
        for number, line in enumerate((ROOT / path).read_text("utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not found, "\n".join(found)
