"""Small eval set files for tests that run an agent: one case, judged by whether its final
answer contains a phrase."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["one_case_evalset"]


def one_case_evalset(path: Path, eval_set_id: str, case_id: str, user: str, contains: str) -> Path:
    """Write an eval set of one case (``user`` says one thing; it passes when the final
    answer contains ``contains``) to ``path``; returns it."""
    path.write_text(
        json.dumps(
            {
                "eval_set_id": eval_set_id,
                "eval_cases": [
                    {
                        "eval_id": case_id,
                        "conversation": [{"user_content": user}],
                        "expectations": [{"final_contains": contains}],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    return path
