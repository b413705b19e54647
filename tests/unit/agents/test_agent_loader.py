"""load_agent: agent specs to agents, and errors that name the spec."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.http import HttpAgent
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.loader import AgentLoadError, load_agent
from agentflow_eval.agents.python import PythonAgent

REPO = Path(__file__).resolve().parents[3]

AGENTS_MODULE = """
from agentflow_eval.agents.litellm_agent import LiteLLMAgent
from agentflow_eval.agents.python import PythonAgent

def echo(message: str) -> str:
    return message

def make_agent():
    return PythonAgent(echo, name="made")

def make_function():
    return echo

def make_nothing():
    return 42

def build_nothing(tools):
    return 42

def needs_user(message: str, user: str) -> str:
    return message

class Custom:
    name = "custom"

    async def start_session(self, context):
        raise NotImplementedError

class NotAnAgent:
    pass

llm = LiteLLMAgent("openai/gpt-4o-mini", name="llm")
number = 7
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A project directory (the cwd) with a uniquely named module of agents; returns the
    module's name."""
    name = f"agents_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(AGENTS_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return name


@pytest.mark.parametrize(
    ("attr", "kind", "name"),
    [
        ("echo", PythonAgent, "echo"),
        ("make_agent", PythonAgent, "made"),
        ("make_function", PythonAgent, "make_function"),
        ("Custom", None, "custom"),
        ("llm", LiteLLMAgent, "llm"),
    ],
)
def test_module_attr_specs(project: str, attr: str, kind: type | None, name: str) -> None:
    agent = load_agent(f"{project}:{attr}")
    assert isinstance(agent, AgentUnderTest)
    if kind is not None:
        assert isinstance(agent, kind)
    assert agent.name == name


def test_file_specs_load_the_file(project: str) -> None:
    agent = load_agent(f"./{project}.py:echo")
    assert isinstance(agent, PythonAgent)
    assert agent.fn.__module__ == project  # a top-level file in the cwd is that module


def test_a_file_in_a_package_is_imported_as_its_package_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = f"pkg_{uuid.uuid4().hex[:8]}"
    (tmp_path / package / "sub").mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "sub" / "__init__.py").write_text("")
    (tmp_path / package / "sub" / "helpers.py").write_text("GREETING = 'hello'\n")
    (tmp_path / package / "sub" / "bot.py").write_text(
        textwrap.dedent(
            """
            from .helpers import GREETING

            def bot(message: str) -> str:
                return f"{GREETING} {message}"
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    agent = load_agent(f"{package}/sub/bot.py:bot")
    assert isinstance(agent, PythonAgent)
    assert agent.fn.__module__ == f"{package}.sub.bot"


def test_a_standalone_file_outside_the_cwd_loads(tmp_path: Path) -> None:
    path = tmp_path / "outside" / "my-agent.py"
    path.parent.mkdir()
    path.write_text("def reply(message: str) -> str:\n    return 'ok'\n")
    agent = load_agent(f"{path}:reply")
    assert isinstance(agent, PythonAgent)
    assert agent.fn("x") == "ok"


def test_the_weather_example_loads_and_switches_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    agent = load_agent("examples.weather.agent:agent")
    assert isinstance(agent, LiteLLMAgent)
    assert agent.model == "agentflow-demo/weather"
    switched = load_agent("examples.weather.agent:agent", model="openai/gpt-4o-mini")
    assert isinstance(switched, LiteLLMAgent)
    assert switched.model == "openai/gpt-4o-mini"
    assert [t.name for t in switched.tools] == ["get_weather"]


def test_url_specs_are_http_agents() -> None:
    openai = load_agent("http://127.0.0.1:8000/v1/chat/completions")
    simple = load_agent("simple+https://agents.example/respond")
    assert isinstance(openai, HttpAgent) and openai.shape == "openai"
    assert openai.url == "http://127.0.0.1:8000/v1/chat/completions"
    assert isinstance(simple, HttpAgent) and simple.shape == "simple"
    assert simple.url == "https://agents.example/respond"


def test_model_only_applies_to_agents_that_can_switch_model(project: str) -> None:
    with pytest.raises(ValueError, match="--model only applies to LiteLLM agents") as info:
        load_agent(f"{project}:echo", model="openai/gpt-4o")
    assert f"{project}:echo" in str(info.value)
    with pytest.raises(AgentLoadError, match="is a HttpAgent"):
        load_agent("http://127.0.0.1:1/x", model="openai/gpt-4o")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("not a module!", "is not one of 'package.module:attr'"),
        ("no_module_here", "importing 'no_module_here' failed: ModuleNotFoundError.*'package"),
        ("./no/such/folder", "no such file or folder"),
        ("module:", "is not one of"),
        ("simple+ftp://x", "expected simple\\+http"),
        ("missing_module_xyz:agent", "importing 'missing_module_xyz' failed: ModuleNotFoundError"),
        ("./nowhere.py:agent", "file './nowhere.py' does not exist"),
    ],
)
def test_malformed_or_missing_specs(project: str, spec: str, message: str) -> None:
    with pytest.raises(AgentLoadError, match=message) as info:
        load_agent(spec)
    assert repr(spec) in str(info.value)


AGENT_LIKE = (
    "agent-like names there: Custom, build_nothing, echo, llm, make_agent, make_function, "
    "make_nothing"
)


def test_a_missing_attribute_lists_the_agents_that_are_there(project: str) -> None:
    with pytest.raises(AgentLoadError, match="has no attribute 'agent'") as info:
        load_agent(f"{project}:agent")
    # what the loader accepts, defined there: not the classes it imports, nor a number
    assert str(info.value).endswith(f"{AGENT_LIKE}, needs_user")


def test_a_mistyped_attribute_gets_the_near_agent_like_name(tmp_path: Path) -> None:
    path = tmp_path / "my_agent.py"
    path.write_text(AGENTS_MODULE)
    with pytest.raises(AgentLoadError) as info:
        load_agent(f"{path}:make_agnet")
    message = str(info.value)
    assert f"has no attribute 'make_agnet'; did you mean 'make_agent'?; {AGENT_LIKE}" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        ("number", "is a int; expected an agent"),
        ("NotAnAgent", "has no start_session"),
        ("make_nothing", "called as an agent factory, but it returned int"),
        ("build_nothing", r"called as a graph factory, but build_nothing\(\[\]\) returned int"),
        ("needs_user", "required parameter 'user'"),
    ],
)
def test_objects_that_are_not_agents(project: str, attr: str, message: str) -> None:
    with pytest.raises(AgentLoadError, match=message) as info:
        load_agent(f"{project}:{attr}")
    assert f"{project}:{attr}" in str(info.value)


def test_an_error_inside_the_module_is_reported_with_its_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"broken_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("import json\nraise RuntimeError('missing API key')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(AgentLoadError, match="RuntimeError: missing API key") as info:
        load_agent(f"{name}:agent")
    assert isinstance(info.value.__cause__, RuntimeError)


# --- agents named by module or folder, as ADK's agent_module -------------------------------

PACKAGE_AGENT = """
from agentflow_eval.agents.python import PythonAgent

def _reply(message: str) -> str:
    return "pkg:" + message

{name} = PythonAgent(_reply, name="{label}")
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package ``pkg_<id>`` under the cwd with ``agent.py`` defining ``agent`` and
    ``other/agent.py`` defining ``root_agent`` beside ``agent``."""
    name = f"pkg_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    (root / "other").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "agent.py").write_text(PACKAGE_AGENT.format(name="agent", label="plain"))
    (root / "other" / "__init__.py").write_text("from . import agent\n")
    (root / "other" / "agent.py").write_text(
        PACKAGE_AGENT.format(name="root_agent", label="root")
        + PACKAGE_AGENT.format(name="agent", label="second")
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return name


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("{pkg}.agent", "plain"),
        ("{pkg}", "plain"),
        ("{pkg}/", "plain"),
        ("{pkg}/agent.py", "plain"),
        ("./{pkg}", "plain"),
        ("{pkg}.other.agent", "root"),  # root_agent first, as ADK
        ("{pkg}.other", "root"),  # the package imports its agent module: ADK's layout
        ("{pkg}/other", "root"),
    ],
)
def test_module_and_folder_specs_take_root_agent_else_agent(
    package: str, spec: str, name: str
) -> None:
    agent = load_agent(spec.format(pkg=package))
    assert isinstance(agent, PythonAgent) and agent.name == name


def test_a_module_without_root_agent_or_agent_lists_what_it_has(project: str) -> None:
    with pytest.raises(AgentLoadError, match="defines neither root_agent nor agent") as info:
        load_agent(project)
    assert AGENT_LIKE in str(info.value)
    assert "'package.module:attr'" in str(info.value)


def test_a_folder_without_an_agent_module_says_so(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentLoadError, match=r"the folder has no agent\.py"):
        load_agent("empty")


def test_the_weather_example_by_module_and_by_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    for spec in ("examples.weather.agent", "examples/weather", "examples.weather"):
        agent = load_agent(spec)
        assert isinstance(agent, LiteLLMAgent) and agent.name == "weather_agent"


FRAMEWORK_ADAPTER = """
from agentflow_eval.agents.python import PythonAgent

def wrap(obj, *, name):
    return PythonAgent(lambda message: obj.label, name=f"{name}:{obj.label}")
"""
APP_MODULE = """
from agentflow_eval.agents.python import PythonAgent
{imports}

app = {app}
root_agent = PythonAgent(lambda message: "root", name="root")
"""


def test_a_frameworks_app_comes_before_root_agent_and_any_other_app_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ADK's loader takes a module's App before its root_agent; a web app named app is
    # nobody's agent
    from agentflow_eval.agents import frameworks

    fw = f"fw_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{fw}.py").write_text(
        "class App:\n    def __init__(self, label):\n        self.label = label\n"
    )
    (tmp_path / f"{fw}_adapter.py").write_text(FRAMEWORK_ADAPTER)
    framework_app = f"with_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{framework_app}.py").write_text(
        APP_MODULE.format(imports=f"from {fw} import App", app='App("weather_app")')
    )
    web_app = f"web_app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{web_app}.py").write_text(
        APP_MODULE.format(imports="class WebApp:\n    label = 'web'", app="WebApp()")
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    adapter = frameworks.register_adapter(
        frameworks.FrameworkAdapter(fw, (fw,), f"{fw}_adapter", "fake")
    )
    try:
        assert load_agent(framework_app).name == "app:weather_app"
        assert load_agent(web_app).name == "root"
        assert load_agent(f"{framework_app}:root_agent").name == "root"  # named, it is taken
    finally:
        frameworks.ADAPTERS.remove(adapter.name)


FACTORY_ADAPTER = """
from agentflow_eval.agents.python import PythonAgent

def wrap(obj, *, name):
    return PythonAgent(lambda message: obj.label, name=name)

def wrap_factory(factory, *, name, first):
    agent = PythonAgent(lambda message: first.label, name=f"{name}:{first.label}")
    agent.factory = factory
    return agent
"""
FACTORY_MODULE = """
from {fw} import Graph

def build(tools):
    return Graph(f"with {{len(tools)}} tools")
"""


@pytest.mark.parametrize("takes_factories", [True, False])
def test_a_function_of_tools_is_built_once_and_handed_to_its_adapters_wrap_factory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, takes_factories: bool
) -> None:
    # a LangGraph graph factory (def build(tools)): its adapter builds each trial's graph
    from agentflow_eval.agents import frameworks

    fw = f"fw_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{fw}.py").write_text(
        "class Graph:\n    def __init__(self, label):\n        self.label = label\n"
    )
    adapter_source = FACTORY_ADAPTER if takes_factories else FRAMEWORK_ADAPTER
    (tmp_path / f"{fw}_adapter.py").write_text(adapter_source)
    module = f"graphs_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(FACTORY_MODULE.format(fw=fw))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    adapter = frameworks.register_adapter(
        frameworks.FrameworkAdapter(fw, (fw,), f"{fw}_adapter", "fake")
    )
    try:
        if takes_factories:
            agent = load_agent(f"{module}:build")
            assert agent.name == "build:with 0 tools"  # built with no tools, to load it
            assert agent.factory([1, 2]).label == "with 2 tools"  # type: ignore[attr-defined]
        else:
            with pytest.raises(AgentLoadError, match="builds no agent from a function of tools"):
                load_agent(f"{module}:build")
    finally:
        frameworks.ADAPTERS.remove(adapter.name)
