"""Turn an agent spec (what a user types after ``--agent``) into an :class:`AgentUnderTest`.

Accepted specs:

- ``package.module:attr`` — imported with the current directory on ``sys.path``;
- ``path/to/file.py:attr`` — loaded from the file (as its package module when the file sits
  in a package under the current directory, so relative imports work);
- ``package.module`` — the module's ``root_agent``, else its ``agent`` (Google ADK's
  ``agent_module`` convention); a package without either is read through its ``agent``
  submodule, so ``examples.weather`` and ``examples.weather.agent`` name the same agent.
  As ADK's own loader does, a module-level ``app`` comes first when it is a framework's
  object (an ADK ``App``); any other ``app`` (a web application) is left alone;
- ``path/to/folder`` — the folder's ``agent.py`` (else its ``__init__.py``), by the same
  rule; ``path/to/file.py`` alone works the same way;
- ``http(s)://...`` — an :class:`HttpAgent` speaking the OpenAI chat-completions shape;
- ``simple+http(s)://...`` — an :class:`HttpAgent` speaking the simple JSON shape.

``attr`` (dots allowed: ``module:Class.attr``) may be an agent object, an agent class
(instantiated with no arguments), a synchronous function with no parameters (a factory,
called once; it returns an agent or an agent function), a synchronous function whose one
parameter is ``tools`` (a LangGraph graph factory: called with no tools here, and with
the trial's MCP tools for each trial of a run that has MCP servers), or an agent function
(wrapped in :class:`PythonAgent`); so may the ``root_agent`` or ``agent`` a module form finds. Every
failure raises :class:`AgentLoadError` naming the spec.

:func:`load_callable` imports a plain function the same way (``module:attr`` or
``file.py:attr``): the function a component case calls.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast, runtime_checkable

from agentflow_eval.agents import frameworks
from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.http import HttpAgent
from agentflow_eval.agents.python import PythonAgent
from agentflow_eval.errors import InputError
from agentflow_eval.files.errors import did_you_mean
from agentflow_eval.files.python_files import import_python_file
from agentflow_eval.import_cost import paused_collection

__all__ = ["AgentLoadError", "SupportsWithModel", "load_agent", "load_callable"]

_SIMPLE_PREFIX = "simple+"
_SPEC_FORMS = (
    "'package.module:attr', 'path/to/file.py:attr', 'package.module' (its root_agent or "
    "agent), 'path/to/folder' (its agent.py), 'http(s)://...' or 'simple+http(s)://...'"
)
_CONVENTIONAL_NAMES = ("root_agent", "agent")
"""What a module named without ``:attr`` is expected to define, first match wins."""
_TOOLS_PARAM = "tools"
"""The one parameter of a function that builds a framework's agent with the trial's extra
tools (a LangGraph graph factory: ``def build(tools)``)."""
_FRAMEWORK_APP = "app"
"""Checked before those, and taken only when a framework adapter claims it: Google ADK's
loader looks for a module's ``App`` (its plugins and app-wide settings) first."""


class AgentLoadError(InputError):
    """The agent spec could not be turned into an agent."""


@runtime_checkable
class SupportsWithModel(Protocol):
    """An agent that can run on another model."""

    def with_model(self, model: str) -> AgentUnderTest: ...


def load_agent(spec: str, *, model: str | None = None) -> AgentUnderTest:
    """Load the agent named by ``spec``; with ``model``, switch it to that model (only
    agents with a ``with_model`` method, such as :class:`LiteLLMAgent`, support this)."""
    spec = spec.strip()
    agent = _load(spec)
    if model is None:
        return agent
    if not isinstance(agent, SupportsWithModel):
        raise AgentLoadError(
            f"--model only applies to LiteLLM agents (anything with a with_model() method); "
            f"agent spec {spec!r} is a {type(agent).__name__}"
        )
    return agent.with_model(model)


def _load(spec: str) -> AgentUnderTest:
    if spec.startswith(("http://", "https://")):
        return HttpAgent(spec, shape="openai")
    if spec.startswith(_SIMPLE_PREFIX):
        url = spec.removeprefix(_SIMPLE_PREFIX)
        if not url.startswith(("http://", "https://")):
            raise AgentLoadError(f"agent spec {spec!r}: expected simple+http(s)://host/path")
        return HttpAgent(url, shape="simple")
    target, sep, attr = spec.rpartition(":")
    if sep:
        if not target or not attr:
            raise AgentLoadError(f"agent spec {spec!r} is not one of {_SPEC_FORMS}")
        module = _import(target, spec)
        obj = _attribute(module, attr, spec)
        return _as_agent(obj, spec, attr)
    return _conventional_agent(_import_without_attribute(spec), spec)


def load_callable(spec: str) -> Callable[..., Any]:
    """The function ``package.module:attr`` or ``path/to/file.py:attr`` names, imported as
    agent specs are (a component under test, say). Raises :class:`AgentLoadError` with
    the spec and what went wrong."""
    spec = spec.strip()
    label = repr(spec)
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise AgentLoadError(f"{label} is not 'package.module:attr' or 'path/to/file.py:attr'")
    obj = _attribute(_import(target, spec, label), attr, spec, label)
    if not callable(obj):
        raise AgentLoadError(f"{label} is a {type(obj).__name__}, not a function")
    return cast(Callable[..., Any], obj)


def _looks_like_path(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec or "\\" in spec or Path(spec).is_dir()


def _import_without_attribute(spec: str) -> ModuleType:
    """The module a spec without ``:attr`` names: a dotted module, a ``.py`` file, or a
    folder (its ``agent.py``, else its ``__init__.py``)."""
    if not _looks_like_path(spec):
        if not all(part.isidentifier() for part in spec.split(".")):
            raise AgentLoadError(f"agent spec {spec!r} is not one of {_SPEC_FORMS}")
        try:
            return _import(spec, spec)
        except AgentLoadError as exc:
            if isinstance(exc.__cause__, ModuleNotFoundError):
                raise AgentLoadError(f"{exc}; agent specs are {_SPEC_FORMS}") from exc.__cause__
            raise
    path = Path(spec)
    if path.is_dir():
        for candidate in (path / "agent.py", path / "__init__.py"):
            if candidate.is_file():
                return _import(str(candidate), spec)
        raise AgentLoadError(
            f"agent spec {spec!r}: the folder has no agent.py (or __init__.py) defining "
            "root_agent or agent"
        )
    if not path.exists():
        raise AgentLoadError(
            f"agent spec {spec!r}: no such file or folder; expected one of {_SPEC_FORMS}"
        )
    return _import(spec, spec)


def _conventional_agent(module: ModuleType, spec: str, depth: int = 0) -> AgentUnderTest:
    """ADK's ``agent_module`` convention: ``root_agent``, else ``agent`` (which may be the
    package's ``agent`` submodule, read the same way); a package with neither is read
    through its ``agent`` submodule. A framework's ``app`` (ADK's ``App``) comes first."""
    app = getattr(module, _FRAMEWORK_APP, None)
    if app is not None and frameworks.adapter_for(app) is not None:
        return _as_agent(app, spec, _FRAMEWORK_APP)
    for name in _CONVENTIONAL_NAMES:
        if hasattr(module, name):
            obj = getattr(module, name)
            if isinstance(obj, ModuleType):
                if depth == 0:
                    return _conventional_agent(obj, spec, depth + 1)
                continue
            return _as_agent(obj, spec, name)
    submodule = f"{module.__name__}.agent"
    if depth == 0 and hasattr(module, "__path__") and importlib.util.find_spec(submodule):
        return _conventional_agent(_import(submodule, spec), spec, depth + 1)
    candidates = _agent_like_names(module)
    hint = f"; agent-like names there: {', '.join(candidates)}" if candidates else ""
    raise AgentLoadError(
        f"agent spec {spec!r}: {module.__name__!r} defines neither root_agent nor agent"
        f"{hint}; name the attribute as 'module:attr' (forms: {_SPEC_FORMS})"
    )


def _import(target: str, spec: str, label: str | None = None) -> ModuleType:
    """The module ``target`` names (dotted, or a ``.py`` file); a failure names ``label``
    (default: the agent spec)."""
    where = label or f"agent spec {spec!r}"
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    looks_like_file = target.endswith(".py") or "/" in target or "\\" in target
    try:
        with paused_collection():  # an agent's module often loads a whole framework
            if not looks_like_file:
                return importlib.import_module(target)
            path = Path(target)
            if not path.is_file():
                raise AgentLoadError(f"{where}: file {target!r} does not exist")
            dotted = _package_module_name(path.resolve())
            if dotted is not None:
                return importlib.import_module(dotted)
            return import_python_file(path, "agentflow_agent")
    except AgentLoadError:
        raise
    except Exception as exc:
        raise AgentLoadError(
            f"{where}: importing {target!r} failed: {type(exc).__name__}: {exc}"
        ) from exc


def _package_module_name(path: Path) -> str | None:
    """``examples/weather/agent.py`` → ``examples.weather.agent`` when every folder between
    the current directory and the file is a package; otherwise None."""
    try:
        relative = path.with_suffix("").relative_to(Path.cwd().resolve())
    except ValueError:
        return None
    parts = relative.parts
    folder = Path.cwd().resolve()
    for part in parts[:-1]:
        folder = folder / part
        if not (folder / "__init__.py").is_file():
            return None
    if not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _attribute(module: ModuleType, attr: str, spec: str, label: str | None = None) -> Any:
    """``module``'s attribute ``attr`` (dots allowed); a failure names ``label`` (default:
    the agent spec, with the agent-like names the module has)."""
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            if label is not None:
                raise AgentLoadError(f"{label}: {module.__name__!r} has no attribute {attr!r}")
            candidates = _agent_like_names(module)
            near = did_you_mean(part, candidates)
            hint = f"; agent-like names there: {', '.join(candidates)}" if candidates else ""
            raise AgentLoadError(
                f"agent spec {spec!r}: {module.__name__!r} has no attribute {attr!r}{near}{hint}"
            )
        obj = getattr(obj, part)
    return obj


def _agent_like_names(module: ModuleType) -> list[str]:
    """The public names in ``module`` the loader could take as the agent: agents, agent
    classes, a framework's agents, and the functions the module defines (agent
    functions or factories; functions it imports are left out)."""
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and _agent_like(value, module)
    )


def _agent_like(value: Any, module: ModuleType) -> bool:
    if isinstance(value, type):
        return hasattr(value, "start_session") and value.__module__ == module.__name__
    if isinstance(value, AgentUnderTest) or frameworks.adapter_for(value) is not None:
        return True
    return inspect.isfunction(value) and value.__module__ == module.__name__


def _as_agent(obj: Any, spec: str, attr: str) -> AgentUnderTest:
    if isinstance(obj, type):
        if not hasattr(obj, "start_session"):
            raise AgentLoadError(
                f"agent spec {spec!r} names the class {obj.__name__}, which has no "
                "start_session(); an agent class must implement AgentUnderTest"
            )
        try:
            obj = obj()
        except Exception as exc:
            raise AgentLoadError(
                f"agent spec {spec!r}: {obj.__name__}() failed: {type(exc).__name__}: {exc}"
            ) from exc
    if isinstance(obj, AgentUnderTest):
        return obj
    framework = frameworks.adapter_for(obj)
    if framework is not None:
        return _framework_agent(obj, framework, spec, attr)
    if not callable(obj):
        raise AgentLoadError(
            f"agent spec {spec!r} is a {type(obj).__name__}; expected an agent, an agent "
            "class, a factory function or an agent function"
        )
    if _is_factory(obj):
        try:
            made = obj()
        except Exception as exc:
            raise AgentLoadError(
                f"agent spec {spec!r}: the factory {attr}() failed: {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(made, AgentUnderTest):
            return made
        framework = frameworks.adapter_for(made)
        if framework is not None:
            return _framework_agent(made, framework, spec, attr)
        if callable(made):
            return _python_agent(made, spec, attr)
        raise AgentLoadError(
            f"agent spec {spec!r}: {attr} takes no parameters, so it was called as an agent "
            f"factory, but it returned {type(made).__name__}; a factory must return an agent "
            "or an agent function (an agent function takes a 'message' parameter)"
        )
    if _is_tools_factory(obj):
        return _tools_factory_agent(obj, spec, attr)
    return _python_agent(obj, spec, attr)


def _tools_factory_agent(factory: Any, spec: str, attr: str) -> AgentUnderTest:
    """A framework's agent built by a function of the trial's tools (a LangGraph graph
    factory): called once here with none, to learn which framework's object it builds."""
    try:
        made = factory([])
    except Exception as exc:
        raise AgentLoadError(
            f"agent spec {spec!r}: {attr}(tools=[]) failed: {type(exc).__name__}: {exc}"
        ) from exc
    framework = frameworks.adapter_for(made)
    if framework is None:
        raise AgentLoadError(
            f"agent spec {spec!r}: {attr} takes 'tools', so it was called as a graph factory, "
            f"but {attr}([]) returned {type(made).__name__}; it must return a LangGraph graph "
            "built with those tools"
        )
    return _framework_agent(made, framework, spec, attr, factory=factory)


def _framework_agent(
    obj: Any,
    framework: frameworks.FrameworkAdapter,
    spec: str,
    attr: str,
    *,
    factory: Any = None,
) -> AgentUnderTest:
    """A framework's agent (built by ``factory`` when given), through its adapter; a
    failure names the spec."""
    try:
        return frameworks.wrap(obj, name=attr, adapter=framework, factory=factory)
    except frameworks.FrameworkMissing as exc:
        raise AgentLoadError(f"agent spec {spec!r}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise AgentLoadError(
            f"agent spec {spec!r}: the {framework.name} adapter cannot evaluate it: {exc}"
        ) from exc


def _is_factory(obj: Any) -> bool:
    """A synchronous callable without parameters cannot read the user's message, so it
    is taken to build the agent rather than be it."""
    if inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(
        getattr(obj, "__call__", None)  # noqa: B004
    ):
        return False
    try:
        return not inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False


def _is_tools_factory(obj: Any) -> bool:
    """A synchronous callable whose one parameter is ``tools``: it builds the agent with
    the trial's extra tools (an agent function may not take ``tools``)."""
    if inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(
        getattr(obj, "__call__", None)  # noqa: B004
    ):
        return False
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return False
    return (
        len(params) == 1
        and params[0].name == _TOOLS_PARAM
        and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)
    )


def _python_agent(fn: Any, spec: str, attr: str) -> PythonAgent:
    try:
        return PythonAgent(fn, name=attr)
    except TypeError as exc:
        raise AgentLoadError(f"agent spec {spec!r}: {exc}") from exc
