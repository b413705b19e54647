"""The functions a run's component cases call, loaded when the run is planned: a target
that does not import, is not a function or cannot take the case's input is bad input,
refused before any run folder exists (one line naming file, case and field).

Targets are named as agent specs are (``package.module:attr``, ``path/to/file.py:attr``,
relative to the current directory) and imported by the same machinery
(:func:`~agentflow_eval.agents.loader.load_callable`), each spec once per run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow_eval.agents.loader import load_callable
from agentflow_eval.agents.threads import AgentThreads
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import EvalFileError, Problem
from agentflow_eval.models.evalset import EvalCase, EvalSet

__all__ = ["ComponentTarget", "ComponentTargets", "load_components"]


@dataclass(frozen=True, eq=False)
class ComponentTarget:
    """A loaded component: the function a spec names, how it is called (awaited, or in a
    worker thread of its own pool when it is synchronous)."""

    spec: str
    fn: Callable[..., Any]
    threads: AgentThreads | None
    """Where a synchronous function runs (``None``: it is awaited)."""

    @classmethod
    def of(cls, spec: str, fn: Callable[..., Any]) -> ComponentTarget:
        call = getattr(fn, "__call__", None)  # noqa: B004 - async callable objects too
        is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        threads = None if is_async else AgentThreads(name=f"component {spec!r}")
        return cls(spec=spec, fn=fn, threads=threads)

    async def call(self, case: EvalCase) -> Any:
        """The function called with ``case``'s input (its one positional argument) or
        arguments (keyword arguments); an awaitable it returns is awaited."""
        args, kwargs = case.call_arguments
        if self.threads is None:
            result = self.fn(*args, **kwargs)
        else:
            result = await self.threads.run(self.fn, *args, **kwargs)
        return await result if inspect.isawaitable(result) else result


@dataclass(frozen=True)
class ComponentTargets(Mapping[str, ComponentTarget]):
    """The loaded target of each component case of a run, by case id."""

    by_case: Mapping[str, ComponentTarget] = field(default_factory=dict)

    def __getitem__(self, case_id: str) -> ComponentTarget:
        return self.by_case[case_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_case)

    def __len__(self) -> int:
        return len(self.by_case)

    @property
    def specs(self) -> list[str]:
        """The specs loaded, each once, in the order first met."""
        return list(dict.fromkeys(target.spec for target in self.by_case.values()))


def load_components(eval_set: EvalSet, source: object) -> ComponentTargets:
    """Load the target of every component case of ``eval_set`` (``source`` names the eval
    set in errors). Raises :class:`EvalFileError` with a problem per case whose target
    cannot be used."""
    loaded: dict[str, ComponentTarget | str] = {}  # by spec: the target, or why not
    by_case: dict[str, ComponentTarget] = {}
    problems: list[Problem] = []
    for case in eval_set.eval_cases:
        if case.component is None:
            continue
        spec = case.component.strip()
        if spec not in loaded:
            try:
                loaded[spec] = ComponentTarget.of(spec, load_callable(spec))
            except InputError as exc:
                loaded[spec] = str(exc)
        target = loaded[spec]
        if isinstance(target, str):
            problems.append(Problem(message=target, field="component", case_id=case.eval_id))
            continue
        unfit = _unfit_call(target.fn, case)
        if unfit is not None:
            given = "arguments" if case.arguments is not None else "input"
            problems.append(
                Problem(
                    message=f"{spec!r} cannot be called with it: {unfit}",
                    field=given,
                    case_id=case.eval_id,
                )
            )
            continue
        by_case[case.eval_id] = target
    if problems:
        raise EvalFileError.from_problems(str(source), _once_each(problems))
    return ComponentTargets(by_case)


def _once_each(problems: list[Problem]) -> list[Problem]:
    """One problem per thing wrong: twenty cases naming one target that does not import
    are one line, naming the first case and how many more."""
    grouped: dict[tuple[str, str | None], list[Problem]] = {}
    for problem in problems:
        grouped.setdefault((problem.message, problem.field), []).append(problem)
    once = []
    for (message, where), same in grouped.items():
        more = f" (and {len(same) - 1} more cases)" if len(same) > 1 else ""
        once.append(Problem(message=message + more, field=where, case_id=same[0].case_id))
    return once


def _unfit_call(fn: Callable[..., Any], case: EvalCase) -> str | None:
    """Why ``fn`` cannot be called with ``case``'s input, or ``None`` (also when its
    signature cannot be read: the call itself will tell)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    args, kwargs = case.call_arguments
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None
