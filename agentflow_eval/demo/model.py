"""``agentflow-demo/*``: a built-in offline stand-in for a tool-calling LLM.

It is registered with LiteLLM as a custom provider, so ``litellm.acompletion(
model="agentflow-demo/weather", ...)`` goes through LiteLLM's real code path and the
agent under test cannot tell it from a hosted model. It lets the examples, the docs and
the end-to-end tests run without a network or an API key.

How it answers (heuristics, not a language model):

- A new user message: pick the offered tool with exactly one string parameter that best
  fits the message, pull the capitalised names out of the message ("New York", "Tokyo")
  and call the tool once per name, all in one reply.
- Tool results since the last user message: write the final answer from them, reading the
  usual fields (a condition/description, a temperature and its unit, an ``error``).

Like a real model it is imperfect, on purpose and reproducibly: each decision draws from a
random generator seeded by the request's ``seed`` (default 0), the trial the call is made
for (its case id and trial index, which a trial's model client tags its calls with: see
:meth:`agentflow_eval.llm.client.ModelClient.tagged`) and the conversation so far.
Roughly: one of the names is skipped 15% of the time, the calls come in swapped order
10% of the time, a "Let me look that up." comes with the calls 20% of the time, the
answer is reworded 30% of the time (same facts) and leaves out the temperature 8% of the
time. Repeated trials therefore differ while a whole run repeats exactly.

A judge's call says which criterion it serves (its tags, again): the demo judge
(:func:`agentflow_eval.demo.judge.demo_judge_reply`) answers it with the JSON that
criterion asks for, comparing the fenced texts honestly (same places and numbers →
valid), so the demo model can also act as the judge of the offline example. A criterion
it has no judge for, and other requests for a JSON verdict, are refused with a clear
error.

It is a plugin: :func:`install` registers it with LiteLLM, and the front doors
(the CLI, the flows, the pytest plugin) and the examples call it; the model client knows
nothing of it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from litellm import ModelResponse
from litellm.llms.custom_llm import CustomLLM, CustomLLMError

from agentflow_eval.demo.judge import demo_judge_reply, judges
from agentflow_eval.demo.names import (
    DEMO_PROVIDER,
    SIMULATED_LABEL,
    answering_model,
    is_demo_model,
)
from agentflow_eval.llm import litellm_compat
from agentflow_eval.llm.client import TAGS_KEY, TAGS_METADATA

__all__ = [
    "DEMO_PROVIDER",
    "SIMULATED_LABEL",
    "DemoModel",
    "DemoReply",
    "DemoRequest",
    "agent_reply",
    "asks_for_json_verdict",
    "install",
    "is_demo_model",
    "token_counts",
]

# Imperfection rates (see the module docstring).
P_SKIP_ENTITY = 0.15
P_SWAP_ORDER = 0.10
P_REWORD = 0.30
P_OMIT_TEMPERATURE = 0.08
P_ANNOUNCE = 0.20

_WORD = re.compile(r"[A-Za-z0-9][\w'’-]*")
_CAPITALISED_RUN = re.compile(
    r"[A-Z][\w'’-]*(?:\s+(?:(?:de|da|del|la|le|von|van)\s+)?[A-Z][\w'’-]*)*"
)
_FILLER_WORDS = """
    a about also an and any are at be both but by can check compare could did do does
    find for from get give hello hey hi how how's i i'd i'll i'm in is it it's its just
    let let's look many me much my no now of ok okay on or please right show should so
    tell thank thanks that the then there these this those to today tomorrow tonight
    was we what what's whats when where which who why will with would yes yesterday you
    your monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december
    """
_STOPWORDS = frozenset(_FILLER_WORDS.split())
_VERB_PREFIXES = ("get", "fetch", "lookup", "look", "up", "find", "check", "search", "query")
_DESCRIPTOR_KEYS = ("condition", "conditions", "description", "summary", "status", "forecast")
_TEMPERATURE_KEYS = ("temperature", "temp", "temperature_f", "temperature_c")
_UNIT_KEYS = ("unit", "units", "temperature_unit")


def install() -> None:
    """Make ``agentflow-demo/<anything>`` models available to LiteLLM, whoever calls it
    (the run's model client, or a framework calling LiteLLM itself). Idempotent."""
    if not litellm_compat.has_custom_provider(DEMO_PROVIDER):
        litellm_compat.register_custom_provider(DEMO_PROVIDER, DemoModel())


@dataclass(frozen=True)
class DemoRequest:
    """One chat-completions request, as the demo model reads it."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    seed: int = 0
    case_id: str = ""
    trial_index: int = 0
    criterion: str | None = None
    """The criterion a judge's call serves (``None``: not a judge's call)."""

    def rng(self, purpose: str) -> random.Random:
        """A generator for one decision, seeded by the base seed, the trial the call is
        made for and the conversation so far."""
        trial = (self.case_id, self.trial_index)
        conversation = [
            {
                "role": m.get("role"),
                "content": _text(m.get("content")),
                "calls": [_call_signature(c) for c in m.get("tool_calls") or []],
            }
            for m in self.messages
        ]
        key = json.dumps([self.seed, *trial, purpose, conversation], sort_keys=True)
        return random.Random(hashlib.sha256(key.encode()).digest())

    def text_of(self, *roles: str) -> str:
        return "\n".join(_text(m.get("content")) for m in self.messages if m.get("role") in roles)


@dataclass(frozen=True)
class DemoReply:
    """What the demo model says: text, tool calls (name and arguments), or both."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class DemoModel(CustomLLM):
    """The LiteLLM custom handler behind ``agentflow-demo/*``."""

    def completion(
        self,
        model: str,
        messages: list[Any],
        *args: Any,
        optional_params: dict[str, Any] | None = None,
        litellm_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ModelResponse:
        return self._respond(model, messages, optional_params or {}, litellm_params or {})

    async def acompletion(
        self,
        model: str,
        messages: list[Any],
        *args: Any,
        optional_params: dict[str, Any] | None = None,
        litellm_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ModelResponse:
        return self._respond(model, messages, optional_params or {}, litellm_params or {})

    def reply(self, request: DemoRequest) -> DemoReply:
        """Dispatch: a judge's call to the demo judge of its criterion, everything else
        to the agent."""
        if request.criterion is not None:
            verdict = demo_judge_reply(request.criterion, request.messages)
            if verdict is None:
                raise CustomLLMError(  # type: ignore[no-untyped-call]
                    status_code=400,
                    message=(
                        f"{DEMO_PROVIDER}/{request.model} has no judge for criterion "
                        f"{request.criterion!r}; it judges {', '.join(judges())}"
                    ),
                )
            return DemoReply(content=verdict)
        if asks_for_json_verdict(request):
            return self.judge_reply(request)
        return agent_reply(request)

    def judge_reply(self, request: DemoRequest) -> DemoReply:
        """A JSON verdict asked for by a call that serves no criterion of ours."""
        raise CustomLLMError(  # type: ignore[no-untyped-call]
            status_code=400,
            message=(
                f"{DEMO_PROVIDER}/{request.model} judges only for agentflow-eval's own "
                "criteria; this request asks for a JSON verdict in another form"
            ),
        )

    def _respond(
        self,
        model: str,
        messages: list[Any],
        optional_params: dict[str, Any],
        litellm_params: dict[str, Any],
    ) -> ModelResponse:
        seed = optional_params.get("seed")
        tags = _tags(litellm_params)
        trial = tags.get("trial", "0")
        request = DemoRequest(
            model=model,
            messages=[_as_dict(m) for m in messages],
            tools=list(optional_params.get("tools") or []),
            seed=int(seed) if isinstance(seed, int | float) else 0,
            case_id=tags.get("case", ""),
            trial_index=int(trial) if trial.isdigit() else 0,
            criterion=tags.get("criterion"),
        )
        return _model_response(request, self.reply(request))


def _tags(litellm_params: dict[str, Any]) -> dict[str, str]:
    """The agentflow tags of a call (see :meth:`ModelClient.tagged`), if it has any."""
    metadata = litellm_params.get(TAGS_METADATA)
    tags = metadata.get(TAGS_KEY) if isinstance(metadata, dict) else None
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, dict) else {}


def asks_for_json_verdict(request: DemoRequest) -> bool:
    """Whether the system/user prompt asks for a JSON verdict (what judge prompts do)."""
    prompt = request.text_of("system", "user").lower()
    return "json" in prompt and any(
        word in prompt for word in ("verdict", "is_correct", '"score"', "grade")
    )


def agent_reply(request: DemoRequest) -> DemoReply:
    """The tool-calling agent behaviour described in the module docstring."""
    last_user = max(
        (i for i, m in enumerate(request.messages) if m.get("role") == "user"), default=-1
    )
    since_user = request.messages[last_user + 1 :]
    results = _tool_results(since_user)
    if results:
        return DemoReply(content=_final_answer(results, request))
    user_text = _text(request.messages[last_user].get("content")) if last_user >= 0 else ""
    return _plan(user_text, request)


# -- planning: which tool, which names ---------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    """A usable tool: its name, the parameter to fill, the words of its name (never part
    of a name in the message) and of its name and description (to score the fit)."""

    name: str
    param: str
    name_words: frozenset[str]
    vocabulary: frozenset[str]


def _plan(user_text: str, request: DemoRequest) -> DemoReply:
    candidates = [c for c in (_candidate(t) for t in request.tools) if c is not None]
    words = {w.lower() for w in _WORD.findall(user_text)}
    if not candidates:
        if words & {"thanks", "thank"}:
            return DemoReply(content="You're welcome!")
        return DemoReply(content="I don't have a tool that can help with that.")
    tool = max(candidates, key=lambda c: len(words & c.vocabulary))
    entities = _entities(user_text, tool.name_words)
    if not entities:
        if words & {"thanks", "thank"}:
            return DemoReply(content="You're welcome!")
        return DemoReply(content=f"Which {tool.param.replace('_', ' ')} should I look up?")
    rng = request.rng("plan")
    if rng.random() < P_SKIP_ENTITY:
        entities.pop(rng.randrange(len(entities)))
    if len(entities) > 1 and rng.random() < P_SWAP_ORDER:
        i, j = rng.sample(range(len(entities)), 2)
        entities[i], entities[j] = entities[j], entities[i]
    if not entities:
        return DemoReply(content="I'm not sure; I couldn't look that up right now.")
    announce = "Let me look that up." if rng.random() < P_ANNOUNCE else None
    return DemoReply(content=announce, tool_calls=[(tool.name, {tool.param: e}) for e in entities])


def _candidate(tool: dict[str, Any]) -> _Candidate | None:
    """A tool the demo model can use: it has one string parameter to fill in (the only
    required parameter, or, when none is required, the only string parameter)."""
    function = tool.get("function") or {}
    name = function.get("name")
    parameters = function.get("parameters") or {}
    properties: dict[str, Any] = parameters.get("properties") or {}
    required: list[str] = list(parameters.get("required") or [])
    strings = [
        p for p, s in properties.items() if isinstance(s, dict) and s.get("type") == "string"
    ]
    if len(required) == 1:
        chosen = required if required[0] in strings else []
    else:
        chosen = strings if not required else []
    if not name or len(chosen) != 1:
        return None
    name_words = _split_words(name)
    return _Candidate(
        name=name,
        param=chosen[0],
        name_words=name_words,
        vocabulary=name_words | _split_words(function.get("description") or ""),
    )


def _split_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[_\W]+", text.lower()) if w)


def _entities(text: str, tool_words: frozenset[str]) -> list[str]:
    """Capitalised names in ``text``, minus sentence openers and the tool's own words."""
    found: list[str] = []
    for match in _CAPITALISED_RUN.finditer(text):
        words = [_strip_possessive(w) for w in match.group(0).split()]
        while words and _is_filler(words[0], tool_words):
            words.pop(0)
        while words and _is_filler(words[-1], tool_words):
            words.pop()
        name = " ".join(words)
        if name and name not in found:
            found.append(name)
    return found


def _is_filler(word: str, tool_words: frozenset[str]) -> bool:
    lower = word.lower().replace("’", "'")
    return lower in _STOPWORDS or lower in tool_words


def _strip_possessive(word: str) -> str:
    return re.sub(r"['’]s$", "", word)


# -- answering from tool results ---------------------------------------------------------


@dataclass(frozen=True)
class _Result:
    tool: str
    subject: str
    value: Any


@dataclass(frozen=True)
class _Facts:
    subject: str
    topic: str
    descriptor: str | None = None
    temperature: str | None = None
    other: str | None = None
    error: str | None = None


def _tool_results(messages: Sequence[dict[str, Any]]) -> list[_Result]:
    calls: dict[str, tuple[str, str]] = {}
    results: list[_Result] = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            calls[call.get("id") or ""] = (function.get("name") or "", _subject(function))
        if message.get("role") == "tool":
            tool, subject = calls.get(message.get("tool_call_id") or "", ("", ""))
            raw = _text(message.get("content"))
            try:
                value: Any = json.loads(raw)
            except json.JSONDecodeError:
                value = raw
            results.append(_Result(tool=tool, subject=subject, value=value))
    return results


def _subject(function: dict[str, Any]) -> str:
    try:
        args = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        return ""
    values = [v for v in args.values() if isinstance(v, str)] if isinstance(args, dict) else []
    return values[0] if values else ""


def _final_answer(results: list[_Result], request: DemoRequest) -> str:
    rng = request.rng("answer")
    omit_temperature = rng.random() < P_OMIT_TEMPERATURE
    reword = rng.random() < P_REWORD
    facts = [_facts(r, omit_temperature) for r in results]
    failures = [f for f in facts if f.error is not None]
    good = [f for f in facts if f.error is None]
    sentences: list[str] = []
    if len(good) >= 2 and not reword:
        sentences.append(_comparison(good))
    else:
        sentences += [_sentence(f, reword) for f in good]
    sentences += [f"I couldn't get the {f.topic} for {f.subject}: {f.error}." for f in failures]
    return " ".join(sentences) or "I couldn't find anything."


def _facts(result: _Result, omit_temperature: bool) -> _Facts:
    topic = _topic(result.tool)
    subject = result.subject or "it"
    value = result.value
    if not isinstance(value, dict):
        return _Facts(subject=subject, topic=topic, other=str(value))
    if value.get("error"):
        return _Facts(subject=subject, topic=topic, error=str(value["error"]))
    descriptor = next((str(value[k]) for k in _DESCRIPTOR_KEYS if value.get(k)), None)
    temperature = next((value[k] for k in _TEMPERATURE_KEYS if value.get(k) is not None), None)
    unit = next((str(value[k]) for k in _UNIT_KEYS if value.get(k)), "")
    shown = {*_DESCRIPTOR_KEYS, *_TEMPERATURE_KEYS, *_UNIT_KEYS}
    other = ", ".join(
        f"{k.replace('_', ' ')} {v}"
        for k, v in value.items()
        if k not in shown and isinstance(v, str | int | float) and str(v) != subject
    )
    return _Facts(
        subject=subject,
        topic=topic,
        descriptor=descriptor,
        temperature=None if temperature is None or omit_temperature else f"{temperature}{unit}",
        other=other or None,
    )


def _sentence(f: _Facts, reword: bool) -> str:
    if f.descriptor and f.temperature:
        if reword:
            return f"Right now it's {f.descriptor} in {f.subject}, at {f.temperature}."
        return (
            f"The {f.topic} in {f.subject} is currently {f.descriptor} "
            f"with a temperature of {f.temperature}."
        )
    if f.descriptor:
        if reword:
            return f"Right now it's {f.descriptor} in {f.subject}."
        return f"The {f.topic} in {f.subject} is currently {f.descriptor}."
    if f.temperature:
        return f"It is {f.temperature} in {f.subject}."
    if reword:
        return f"Here is the {f.topic} for {f.subject}: {f.other}."
    return f"The {f.topic} for {f.subject}: {f.other}."


def _comparison(facts: list[_Facts]) -> str:
    parts = []
    for f in facts:
        state = " at ".join(x for x in (f.descriptor, f.temperature) if x) or f.other or "unknown"
        parts.append(f"{f.subject} is {state}")
    if len(parts) == 2:
        return f"{parts[0]} while {parts[1]}."
    return f"{', '.join(parts[:-1])}, and {parts[-1]}."


def _topic(tool_name: str) -> str:
    words = [w for w in tool_name.lower().split("_") if w]
    while len(words) > 1 and words[0] in _VERB_PREFIXES:
        words.pop(0)
    return " ".join(words) or "result"


# -- the wire ----------------------------------------------------------------------------

_call_counter = itertools.count(1)


def token_counts(request: DemoRequest, reply: DemoReply) -> tuple[int, int]:
    """The tokens a call to the demo model counts: words in and words out."""
    prompt_tokens = sum(_words(m.get("content")) for m in request.messages) + _words(
        json.dumps(request.tools)
    )
    return prompt_tokens, _words(reply.content) + _words(json.dumps(reply.tool_calls))


def _model_response(request: DemoRequest, reply: DemoReply) -> ModelResponse:
    digest = hashlib.sha256(
        json.dumps([len(request.messages), reply.content, reply.tool_calls]).encode()
    ).hexdigest()[:12]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_demo_{digest}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for index, (name, args) in enumerate(reply.tool_calls)
        ]
    prompt_tokens, completion_tokens = token_counts(request, reply)
    return ModelResponse(
        id=f"chatcmpl-demo-{digest}-{next(_call_counter)}",
        created=int(time.time()),
        model=answering_model(request.model),
        choices=[
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        usage={
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    )


def _as_dict(message: Any) -> dict[str, Any]:
    if isinstance(message, dict):
        return message
    dump = getattr(message, "model_dump", None)
    return dump() if callable(dump) else {"role": "user", "content": str(message)}


def _text(content: Any) -> str:
    """A message's content as text (string content, or the text parts of a list)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def _call_signature(call: Any) -> list[Any]:
    function = (call.get("function") if isinstance(call, dict) else None) or {}
    return [function.get("name"), function.get("arguments")]


def _words(text: Any) -> int:
    return len(_WORD.findall(_text(text))) if text else 0
