"""The notes example (``agent.py``: ``agent``, scripted; ``llm_agent``, on a model) with
its expectation-only eval set, :data:`EVALSET`."""

from pathlib import Path

__all__ = ["EVALSET", "FOLDER"]

FOLDER = Path(__file__).resolve().parent
EVALSET = FOLDER / "notes.evalset.json"
