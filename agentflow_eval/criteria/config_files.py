"""Configs as the criteria read them: each config entry's own options checked by its
criterion's options model, where the file loader alone (below the criteria) keeps them as
written.

:func:`load_config` and :func:`resolve_config` read files (the public
``agentflow_eval.load_config`` is this one); :func:`config_from_data` reads a config given
as data; :func:`checked_config` reads the entries of a config built in Python. Each
problem names the entry's field as ``criteria.<name>.<field>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentflow_eval.criteria.registry import CATALOGUE, options_model, validation_context
from agentflow_eval.files import loading
from agentflow_eval.files.errors import EvalFileError, Problem, problems_from_validation
from agentflow_eval.models.config import CriterionConfig, EvalConfig

__all__ = ["checked_config", "config_from_data", "load_config", "resolve_config"]


def load_config(path: str | Path, *, max_bytes: int = loading.MAX_FILE_BYTES) -> EvalConfig:
    """Read an evaluation config (native, or ADK ``test_config.json``) from JSON or YAML,
    each criterion's options read by its own model; one larger than ``max_bytes`` is
    refused unread. Raises :class:`~agentflow_eval.files.errors.EvalFileError` naming file
    and field."""
    return loading.load_config(path, criteria=CATALOGUE, max_bytes=max_bytes)


def resolve_config(evalset_path: str | Path, config_path: str | Path | None = None) -> EvalConfig:
    """The config for an eval set: ``config_path`` when given, else the
    ``test_config.json`` next to it, else ADK's default criteria."""
    return loading.resolve_config(evalset_path, config_path, criteria=CATALOGUE)


def config_from_data(data: Mapping[str, Any]) -> EvalConfig:
    """A config given as data (a dict shaped like a config file), each criterion's options
    read by its own model. Raises pydantic's ``ValidationError``."""
    return EvalConfig.model_validate(data, context=validation_context())


def checked_config(config: EvalConfig, source: str | Path = "(config)") -> EvalConfig:
    """``config`` with every criterion entry read by its criterion's options model (the
    same config when each already is). An entry whose options do not fit raises
    :class:`~agentflow_eval.files.errors.EvalFileError` against ``source``, one problem
    per field."""
    entries: dict[str, CriterionConfig] = {}
    problems: list[Problem] = []
    for name, entry in config.criteria.items():
        model = options_model(name, entry)
        if isinstance(entry, model):
            entries[name] = entry
            continue
        written = entry.written()
        try:
            entries[name] = model.model_validate(written)
        except ValidationError as exc:
            problems += [
                Problem(
                    problem.message,
                    f"criteria.{name}.{problem.field}" if problem.field else f"criteria.{name}",
                )
                for problem in problems_from_validation(exc, written, model)
            ]
    if problems:
        raise EvalFileError.from_problems(source, problems)
    if all(entries[name] is entry for name, entry in config.criteria.items()):
        return config
    return config.model_copy(update={"criteria": entries})
