"""Provider keys from Prefect Secret blocks, in the environment of the run's process.

A run's ``secrets`` parameter maps environment variable names to Secret block names
(``{"OPENAI_API_KEY": "openai-api-key"}``). The values are read on the worker when the
run starts and set as environment variables for the agent and the judges (LiteLLM and
the OpenAI-compatible transport read keys from there), then put back as they were when
the run ends. Only the block names are ever recorded (in the parameters); the values are
masked in every log line the process sends while the run lasts, and handed to
:func:`register_secret_values` for any other redaction.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from agentflow_eval.redaction import register_secret

__all__ = ["MASK", "SecretMask", "load_secrets", "provider_keys", "register_secret_values"]

MASK = "***"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SecretMask(logging.Filter):
    """Replaces the given values in a log record's message (after its arguments are
    merged in) with :data:`MASK`. Added to handlers, so it sees every record they emit."""

    def __init__(self, values: Iterable[str]) -> None:
        super().__init__()
        # longest first, so a value containing another is masked whole
        self.values = sorted({v for v in values if v}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            text = self.mask(logging.Formatter().formatException(record.exc_info))
            record.exc_info, record.exc_text = None, text
        return True


def _all_handlers() -> list[logging.Handler]:
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    return list({id(h): h for logger in loggers for h in logger.handlers}.values())


def register_secret_values(values: Iterable[str]) -> None:
    """Hand secret values to the project's redactor, so results and reports mask them
    too."""
    for value in values:
        register_secret(value)


async def provider_keys(secrets: Mapping[str, str]) -> dict[str, str]:
    """The values of the Secret blocks ``secrets`` names, by environment variable.
    Raises naming the variable and the block that could not be read."""
    from prefect.blocks.system import Secret

    values: dict[str, str] = {}
    for variable, block in secrets.items():
        if not _ENV_NAME.match(variable):
            raise ValueError(
                f"secrets: {variable!r} is not an environment variable name "
                "(letters, digits and _, not starting with a digit)"
            )
        try:
            secret: Secret[Any] = await Secret.aload(block)
        except ValueError as exc:
            raise ValueError(
                f"secrets: no Prefect Secret block named {block!r} for {variable} "
                f"(create it: Secret(value=...).save({block!r})): {exc}"
            ) from None
        value = secret.get()
        if not isinstance(value, str):
            raise ValueError(
                f"secrets: the Secret block {block!r} for {variable} holds a "
                f"{type(value).__name__}; an API key must be a string"
            )
        values[variable] = value
    return values


@asynccontextmanager
async def load_secrets(secrets: Mapping[str, str]) -> AsyncIterator[list[str]]:
    """Set the ``secrets`` in this process's environment for the duration; yield the
    names set. Log lines mention the names only; the values are masked everywhere."""
    if not secrets:
        yield []
        return
    values = await provider_keys(secrets)
    mask = SecretMask(values.values())
    handlers = _all_handlers()
    for handler in handlers:
        handler.addFilter(mask)
    register_secret_values(values.values())
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield sorted(values)
    finally:
        for name, old in before.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
        for handler in handlers:
            handler.removeFilter(mask)
