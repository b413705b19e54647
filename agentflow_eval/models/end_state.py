"""What the world must look like after a trial: a case's ``end_state`` checks.

Each check reads one thing and says what it must be::

    {"sql": "SELECT status FROM refunds WHERE order_id = 'A-1001'", "expect": [["done"]]}
    {"file": "notes/today.txt", "expect": "buy milk", "match": "contains"}
    {"file": "orders.json", "json_path": "orders[0].status", "expect": "refunded"}
    {"json_path": "refunds[?order == 'A-1001'] | length(@)", "expect": 1}
    {"check": "checks.py:refund_made", "options": {"order": "A-1001"}}

- ``sql``: the rows the query returns (a list of rows, each a list of values) from the
  trial's SQLite database (``database``, else the environment's);
- ``file``: the file's text, or with ``json_path`` the value at that path in its JSON;
- ``json_path`` alone: the value at that path in what the environment's ``capture()``
  recorded (read again at each judging, so a ``rejudge`` may add such checks);
- ``check``: what a function of one's own returns, given the trial's environment (and
  ``options`` as keyword arguments); ``expect`` defaults to ``true``.

A relative path is read in the environment's folder, else in the trial's working
directory. JSON paths are JMESPath expressions (``a.b[0]``, ``items[?id == 'x'].n``).
``expect`` is matched as ``match`` says (``exact``, ``contains``, ``json_subset``, as a
component's output is). Everything but ``json_path`` alone is read when the agent is
done and before the environment is torn down, and kept in the trial
(``Trial.end_state``), so the verdict can be given again later from the record alone.
"""

from __future__ import annotations

import json
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from pydantic import Field, field_validator, model_validator

from agentflow_eval.models.file_model import FileModel
from agentflow_eval.models.matching import OutputMatch

__all__ = ["EndStateCheck", "json_path_value"]

_SHOWN_SQL = 80
"""How much of a query a check's label shows."""


class EndStateCheck(FileModel):
    """One thing that must hold in the world when the trial is over (see the module)."""

    sql: str | None = None
    """A query on the trial's SQLite database; its rows are what is found."""
    database: str | None = None
    """The database ``sql`` queries (default: the environment's ``database``)."""
    file: str | None = None
    """A file whose text (or, with ``json_path``, a value in whose JSON) is found."""
    json_path: str | None = None
    """A JMESPath expression into ``file``'s JSON, or (alone) into what the environment
    captured."""
    check: str | None = None
    """A function of one's own, ``module:attr`` or ``file.py:attr``, given the trial's
    environment (as ``environment``, and ``options``): what it returns is found."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for ``check``."""
    expect: Any = None
    """What must be found (any JSON value; ``true`` by default for a ``check``)."""
    match: OutputMatch = "exact"
    """How ``expect`` is matched: ``exact`` (JSON-equal), ``contains`` (a substring, or
    an element: a row of a query's rows) or ``json_subset``."""
    label: str | None = None
    """How the report names the check (default: what it reads)."""

    @model_validator(mode="after")
    def _one_thing_read(self) -> EndStateCheck:
        reads = [name for name in ("sql", "file", "check") if getattr(self, name) is not None]
        if not reads and self.json_path is None:
            raise ValueError("an end-state check reads 'sql', 'file', 'json_path' or 'check'")
        if len(reads) > 1:
            raise ValueError(f"an end-state check reads one thing; this one gives {reads}")
        if self.database is not None and self.sql is None:
            raise ValueError("'database' is for an 'sql' check")
        if self.json_path is not None and reads and reads[0] != "file":
            raise ValueError(f"'json_path' reads a 'file' or what was captured, not {reads[0]!r}")
        if self.options and self.check is None:
            raise ValueError("'options' are for a 'check' function")
        if "expect" not in self.model_fields_set:
            if self.check is None:
                raise ValueError("an end-state check needs 'expect': what must be found")
            self.expect = True
        return self

    @field_validator("check")
    @classmethod
    def _module_and_attribute(cls, value: str | None) -> str | None:
        if value is None:
            return None
        target, sep, attr = value.strip().rpartition(":")
        if not sep or not target.strip() or not attr.strip():
            raise ValueError(f"{value!r} is not 'package.module:attr' or 'path/to/file.py:attr'")
        return value.strip()

    @field_validator("json_path")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                jmespath.compile(value)
            except JMESPathError as exc:
                raise ValueError(
                    f"json_path {value!r} is not a JMESPath expression: {exc}"
                ) from None
        return value

    @property
    def captured_only(self) -> bool:
        """Whether it reads what the environment captured (at judging), not the world."""
        return self.json_path is not None and self.file is None

    @property
    def key(self) -> str:
        """What it reads, as one string: the trial keeps what was found under it, so a
        later judging with the same reading finds it again."""
        if self.sql is not None:
            return json.dumps(["sql", self.database, self.sql])
        if self.file is not None:
            return json.dumps(["file", self.file, self.json_path])
        if self.check is not None:
            return json.dumps(["check", self.check, self.options], sort_keys=True)
        return json.dumps(["captured", self.json_path])

    @property
    def described(self) -> str:
        """How the report names it."""
        if self.label:
            return self.label
        if self.sql is not None:
            query = " ".join(self.sql.split())
            shown = query if len(query) <= _SHOWN_SQL else query[: _SHOWN_SQL - 1] + "…"
            return f"SQL {shown}" + (f" (on {self.database})" if self.database else "")
        if self.file is not None:
            return f"{self.file} at {self.json_path}" if self.json_path else f"file {self.file}"
        if self.check is not None:
            return f"check {self.check}"
        return f"captured state at {self.json_path}"


def json_path_value(path: str, document: Any) -> Any:
    """The value at JMESPath ``path`` in ``document`` (``None`` where there is none)."""
    return jmespath.search(path, document)
