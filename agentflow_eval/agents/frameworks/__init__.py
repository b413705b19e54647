"""Agents built with a framework, evaluated as they are: a small registry of adapters, one
module each, chosen by what an agent spec points to (a compiled LangGraph graph, a Google
ADK agent or ``App``, an OpenAI Agents SDK ``Agent``, a Pydantic AI ``Agent``).

An adapter is recognised by the package its object's class comes from, so no framework is
imported to choose one, and an adapter's module (which imports its framework) is imported
only when an agent spec points at that framework. An adapter module defines::

    def wrap(obj: Any, *, name: str) -> AgentUnderTest

and may define ``wrap_factory(factory, *, name, first)`` for an agent spec naming a
function of the trial's tools (``def build(tools)``; ``first`` is what it returned for
none), as the LangGraph adapter does: its graphs' tools are fixed when compiled.

The built-in adapters are :data:`BUILTIN_ADAPTERS`. A package adds its own with
:func:`register_adapter`, or declares it as an entry point of the
``agentflow_eval.adapters`` group, naming its :class:`FrameworkAdapter` under the
adapter's name (the module it names should not import the framework: it is imported
whenever an agent spec is resolved)::

    [project.entry-points."agentflow_eval.adapters"]
    crewai = "crewai_eval.adapter:ADAPTER"

The adapter registered last is asked first, so a package can replace a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.errors import InputError
from agentflow_eval.import_cost import import_paused
from agentflow_eval.registries import Registry

__all__ = [
    "ADAPTERS",
    "BUILTIN_ADAPTERS",
    "ENTRY_POINT_GROUP",
    "FrameworkAdapter",
    "FrameworkMissing",
    "adapter_for",
    "adapters",
    "register_adapter",
    "wrap",
]


class FrameworkMissing(InputError):
    """An agent spec points at a framework whose adapter cannot be imported (the framework,
    or its extra, is not installed)."""


@dataclass(frozen=True)
class FrameworkAdapter:
    """How agentflow-eval evaluates the agents of one framework.

    ``packages`` are the module prefixes the framework's agent classes live under
    (``"google.adk"``); ``module`` is the adapter's module, whose ``wrap(obj, name=...)``
    returns an :class:`AgentUnderTest`; ``extra`` is the pip extra that installs the
    framework beside agentflow-eval."""

    name: str
    packages: tuple[str, ...]
    module: str
    extra: str

    def recognises(self, obj: Any) -> bool:
        """Whether ``obj``'s class (or a class it derives from) is the framework's."""
        return any(
            _under(klass.__module__, prefix)
            for klass in type(obj).__mro__
            for prefix in self.packages
        )


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


BUILTIN_ADAPTERS: tuple[FrameworkAdapter, ...] = (
    FrameworkAdapter(
        "langgraph", ("langgraph",), "agentflow_eval.agents.frameworks.langgraph", "langgraph"
    ),
    FrameworkAdapter("adk", ("google.adk",), "agentflow_eval.agents.frameworks.adk", "adk"),
    FrameworkAdapter(
        "openai-agents", ("agents",), "agentflow_eval.agents.frameworks.openai_agents",
        "openai-agents",
    ),
    FrameworkAdapter(
        "pydantic-ai", ("pydantic_ai",), "agentflow_eval.agents.frameworks.pydantic_ai",
        "pydantic-ai",
    ),
)  # fmt: skip

ENTRY_POINT_GROUP = "agentflow_eval.adapters"

ADAPTERS: Registry[FrameworkAdapter] = Registry(
    what="framework adapter",
    group=ENTRY_POINT_GROUP,
    kind=FrameworkAdapter,
    name_of=lambda adapter: adapter.name,
    builtins=lambda: BUILTIN_ADAPTERS,
)
"""Every adapter, by name."""


def register_adapter(adapter: FrameworkAdapter) -> FrameworkAdapter:
    """Add an adapter (replacing one of the same name); adapters registered later are
    asked first, so a project can replace a built-in one. Returns it."""
    return ADAPTERS.add(adapter)


def adapters() -> tuple[FrameworkAdapter, ...]:
    """Every adapter, in the order they are asked: the latest registered first."""
    return tuple(ADAPTERS.items())


def adapter_for(obj: Any) -> FrameworkAdapter | None:
    """The adapter for ``obj``, or ``None`` when no framework claims it."""
    return next((adapter for adapter in adapters() if adapter.recognises(obj)), None)


def wrap(
    obj: Any,
    *,
    name: str,
    adapter: FrameworkAdapter | None = None,
    factory: Callable[[list[Any]], Any] | None = None,
) -> AgentUnderTest:
    """``obj`` as an agent under test, through its framework's adapter. With ``factory``
    (a function of the trial's extra tools that built ``obj`` when given none), the
    adapter's ``wrap_factory(factory, name=..., first=obj)`` builds each trial's agent
    with them; an adapter without one refuses it. Raises :class:`FrameworkMissing`
    naming the extra to install when the adapter cannot load, and ``ValueError`` when no
    adapter claims ``obj``."""
    chosen = adapter or adapter_for(obj)
    if chosen is None:
        raise ValueError(f"no framework adapter recognises a {type(obj).__name__}")
    try:
        module = import_paused(chosen.module)
    except ImportError as exc:
        raise FrameworkMissing(
            f"{type(obj).__name__} is a {chosen.name} agent, and its adapter cannot load "
            f"({exc}); install it with: pip install 'agentflow-eval[{chosen.extra}]'"
        ) from exc
    if factory is not None:
        wrap_factory = getattr(module, "wrap_factory", None)
        if wrap_factory is None:
            raise ValueError(
                f"the {chosen.name} adapter builds no agent from a function of tools; name "
                "the agent itself (the run adds MCP servers' tools to it)"
            )
        return cast(AgentUnderTest, wrap_factory(factory, name=name, first=obj))
    make = cast(Callable[..., AgentUnderTest], module.wrap)
    return make(obj, name=name)
