"""``python -m agentflow_eval.examples NAME [DIR]``: copy an example into a folder of
one's own project (default ``./NAME-example``) and print how to evaluate it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

EXAMPLES = ("weather", "notes")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXAMPLES or len(argv) > 2:
        print(
            f"usage: python -m agentflow_eval.examples {{{','.join(EXAMPLES)}}} [DIR]",
            file=sys.stderr,
        )
        return 2
    name = argv[0]
    target = Path(argv[1] if len(argv) > 1 else f"{name}-example")
    if target.exists() and any(target.iterdir()):
        print(f"error: {target} exists and is not empty", file=sys.stderr)
        return 2
    source = Path(__file__).resolve().parent / name
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.suffix in (".py", ".json") and path.name != "__init__.py":
            shutil.copy2(path, target / path.name)
    config = target / "eval_config.json"
    print(f"copied the {name} example into {target}; evaluate it with:")
    print(
        f"  agentflow-eval run {target / 'agent.py'}:agent {target / f'{name}.evalset.json'}"
        + (f" --config {config}" if config.exists() else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
