"""A user's own criterion, named in the config as ``function: "package.module:attr"`` or
``function: "path/to/checks.py:attr"`` (a file path relative to the current directory,
as agent specs are).

The target is one of:

- **a factory**: a class, or a function with exactly three required positional
  parameters. It is called like a built-in factory, ``target(name, options, config)``,
  and must return a :class:`~agentflow_eval.criteria.base.Criterion`. It reads its
  threshold and ``options.options`` itself.
- **a check function**, sync or async, called as ``target(ctx, **options.options)``
  with a :class:`~agentflow_eval.criteria.base.CriterionContext`. It returns a ``bool``
  (1.0 or 0.0), a number (the score, in [0, 1]), a ``(score, reason)`` pair, or a
  :class:`~agentflow_eval.models.results.CriterionResult`. A sync check runs on the event
  loop, so it should be quick; make slow checks ``async``.

A check function's threshold is the config's ``threshold``, else **1.0**: a bool check
passes when it returns True, and a scoring function must reach a perfect score unless
the config sets a lower bar. Problems with the target itself (an import that fails, a
missing attribute, a signature that does not fit) raise ``ValueError`` when the criteria
are built; a check that raises or returns something unusable while judging a trial is
recorded as "not evaluated" with the reason, like any other failure.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentflow_eval.criteria.base import (
    Criterion,
    CriterionContext,
    not_evaluated,
    scored,
    threshold_of,
)
from agentflow_eval.files.python_files import import_python_file
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.results import CriterionResult

__all__ = ["FunctionCriterion", "load_custom_criterion", "resolve_target"]

_EXPECTED_RETURN = "a bool, a score in [0, 1], a (score, reason) pair or a CriterionResult"


def _looks_like_file(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module


def resolve_target(name: str, spec: str) -> Any:
    """The object that ``spec`` (``"package.module:attr"`` or ``"path/to/file.py:attr"``;
    ``attr`` may be dotted) names, for criterion ``name``."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(
            f"criterion {name!r}: function {spec!r} should look like 'package.module:attribute' "
            "or 'path/to/file.py:attribute'"
        )
    file = Path(module_name).expanduser() if _looks_like_file(module_name) else None
    if file is not None and not file.is_file():
        raise ValueError(
            f"criterion {name!r}: function {spec!r}: file {module_name!r} does not exist "
            f"(relative paths are read from {Path.cwd()})"
        )
    try:
        target: Any = (
            import_python_file(file, "agentflow_checks")
            if file
            else importlib.import_module(module_name)
        )
    except Exception as exc:
        raise ValueError(
            f"criterion {name!r}: cannot import module {module_name!r} "
            f"(function {spec!r}): {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(
                f"criterion {name!r}: module {module_name!r} has no attribute {attr!r} "
                f"(function {spec!r})"
            ) from None
    if not callable(target):
        raise ValueError(
            f"criterion {name!r}: {spec!r} is a {type(target).__name__}; expected a criterion "
            "class, a factory (name, options, config) or a check function (ctx)"
        )
    return target


def _signature(target: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(target)
    except (TypeError, ValueError):  # some builtins have no signature
        return None


def _is_factory(target: Callable[..., Any]) -> bool:
    """Classes, and functions with exactly three required positional parameters."""
    if inspect.isclass(target):
        return True
    signature = _signature(target)
    if signature is None:
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [
        p
        for p in signature.parameters.values()
        if p.kind in positional and p.default is inspect.Parameter.empty
    ]
    return len(required) == 3


def _build_from_factory(
    name: str, spec: str, factory: Callable[..., Any], options: CriterionConfig, config: EvalConfig
) -> Criterion:
    signature = _signature(factory)
    if signature is not None:
        try:
            signature.bind(name, options, config)
        except TypeError as exc:
            raise ValueError(
                f"criterion {name!r}: {spec!r} cannot be called as a factory "
                f"(name, options, config): {exc}"
            ) from None
    criterion = factory(name, options, config)
    if not isinstance(criterion, Criterion):
        raise ValueError(
            f"criterion {name!r}: {spec!r} returned a {type(criterion).__name__}; expected "
            "a criterion (name, label, threshold and async evaluate(ctx))"
        )
    return criterion


def _as_score(value: Any) -> float | None:
    """A bool or a finite number in [0, 1] as a score; anything else is None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None


@dataclass
class FunctionCriterion:
    """A check function wrapped as a criterion."""

    name: str
    threshold: float
    function: Callable[..., Any]
    spec: str
    options: dict[str, Any] = field(default_factory=dict)
    label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = self.name

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        details = {"function": self.spec}
        try:
            value = self.function(ctx, **self.options)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return not_evaluated(self, f"{self.spec} raised {type(exc).__name__}: {exc}", details)
        return self._to_result(value, details)

    def _to_result(self, value: Any, details: dict[str, Any]) -> CriterionResult:
        if isinstance(value, CriterionResult):
            return value.model_copy(
                update={"criterion": self.name, "label": value.label or self.label}
            )
        reason: str | None = None
        raw = value
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str | None):
            raw, reason = value
        score = _as_score(raw)
        if score is None:
            return not_evaluated(
                self, f"{self.spec} returned {value!r}; expected {_EXPECTED_RETURN}", details
            )
        return scored(self, score, details, reason=reason)


def _build_from_function(
    name: str, spec: str, function: Callable[..., Any], options: CriterionConfig
) -> FunctionCriterion:
    signature = _signature(function)
    if signature is not None:
        try:
            signature.bind(object(), **options.options)
        except TypeError as exc:
            given = ", ".join(f"{key}=..." for key in options.options)
            call = f"(ctx{', ' + given if given else ''})"
            raise ValueError(
                f"criterion {name!r}: check function {spec!r} cannot be called as {call}: {exc}"
            ) from None
    return FunctionCriterion(
        name=name,
        threshold=threshold_of(options, 1.0),
        function=function,
        spec=spec,
        options=dict(options.options),
    )


def load_custom_criterion(name: str, options: CriterionConfig, config: EvalConfig) -> Criterion:
    """The criterion that config entry ``name`` names with ``function: "module:attr"``."""
    spec = options.function
    if not spec:
        raise ValueError(f"criterion {name!r} has no 'function' to load")
    target = resolve_target(name, spec)
    if _is_factory(target):
        return _build_from_factory(name, spec, target, options, config)
    return _build_from_function(name, spec, target, options)
