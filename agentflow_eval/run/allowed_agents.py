"""Which agents a deployment may evaluate: an allow-list of module prefixes and endpoint
hosts, checked before the agent named by a parameter (or an event) is imported or called.

An event-triggered deployment evaluates whatever agent the event names; importing a
module runs its code on the worker, and calling an endpoint sends it the eval set. With
``allowed_agents`` set, an agent is accepted only when it is

- ``package.module:attr`` whose module is an entry or inside one (``examples`` allows
  ``examples.weather.agent:agent``, not ``examples_evil:agent``), or
- an ``http(s)://`` endpoint whose host (``host`` or ``host:port``) is an entry (an entry
  may be written as a URL: only its host counts).

An agent file (``path/to/agent.py:attr``) is refused: a path on the worker is not an
identity a deployment can vouch for. An empty list allows every agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from agentflow_eval.errors import InputError

__all__ = ["check_agent_allowed"]

_URL_SCHEMES = ("http://", "https://")


def _host(text: str) -> str:
    """``host`` or ``host:port`` of a URL or of a bare host entry, lowercased."""
    parts = urlsplit(text if "://" in text else f"//{text}")
    return (parts.netloc.rpartition("@")[2]).lower()


def _module_allowed(module: str, entries: Sequence[str]) -> bool:
    return any(module == entry or module.startswith(entry + ".") for entry in entries)


def check_agent_allowed(agent: str | None, allowed: Sequence[str]) -> None:
    """Refuse ``agent`` (a spec) unless ``allowed`` is empty or lets it through (see the
    module). Raises :class:`InputError`, one line naming the agent and the list."""
    entries = [entry.strip().rstrip("/") for entry in allowed if entry.strip()]
    if not entries:
        return
    listed = ", ".join(entries)
    if not agent:
        raise InputError(
            f"no agent was named, and this deployment evaluates only agents in "
            f"allowed_agents ({listed}): the event must name one (its resource's "
            "agentflow.agent.spec, or agent in its payload)"
        )
    if agent.startswith(_URL_SCHEMES):
        host = _host(agent)
        if host and any(host == _host(entry) for entry in entries):
            return
        raise InputError(
            f"agent {agent}: host {host or '(none)'} is not in allowed_agents ({listed})"
        )
    target, colon, _attr = agent.rpartition(":")
    module = target if colon else agent
    if "/" in module or "\\" in module or module.endswith(".py"):
        raise InputError(
            f"agent {agent}: an agent file is not allowed when allowed_agents is set "
            f"({listed}); name it by its module (package.module:attr)"
        )
    if not _module_allowed(module, entries):
        raise InputError(f"agent {agent}: module {module} is not in allowed_agents ({listed})")
