"""The base of every file-format model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["FileModel"]


class FileModel(BaseModel):
    """Base for file-format models: snake_case or camelCase keys, unknown keys rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        serialize_by_alias=False,
        use_attribute_docstrings=True,  # a field's docstring is its JSON Schema description
    )
