"""Realistic runs for report and publishing tests, built through the real pipeline.

:func:`sample_run` makes an eval set of travel-assistant cases and, for each trial, a
trajectory with a behaviour chosen per case (always right, flaky, wrong arguments, an
extra call, a crash, a second turn), judges it with the real built-in criteria plus a
scripted stand-in for an LLM judge, and folds it with the real :func:`aggregate`. The
result is the same shape a real run writes, so reports are tested on what they will see.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

from agentflow_eval.criteria.base import CriterionContext, scored
from agentflow_eval.criteria.registry import build_criteria
from agentflow_eval.models.config import CriterionConfig, EvalConfig
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import (
    CriterionResult,
    ModelCallEvent,
    RecordedToolCall,
    RunResult,
    Trial,
    TrialError,
    TrialResult,
    Turn,
    Usage,
)
from agentflow_eval.report import write_html, write_junit, write_results_json
from agentflow_eval.report.digest import TrialDigest
from agentflow_eval.report.writer import write_run_reports
from agentflow_eval.run.aggregate import aggregate, aggregate_judged
from agentflow_eval.run.expected import expected_turns
from agentflow_eval.run.judging import judge_trial
from agentflow_eval.run.plan import RunMeta, RunPaths

__all__ = [
    "XSS_ANSWER",
    "ScriptedJudge",
    "UsageKind",
    "sample_eval_set",
    "sample_run",
    "write_run_dir",
    "write_run_dir_streamed",
]

XSS_ANSWER = (
    'Here you go: <script>document.title="PWNED-SCRIPT";'
    "document.body.setAttribute('data-pwned','script')</script> and "
    "<img src=x onerror=\"document.title='PWNED-IMG';"
    "document.body.setAttribute('data-pwned','img')\"> & \"quotes\" 'too'"
)
"""An agent answer carrying script payloads; a safe report shows it as text."""

T = TypeVar("T")

START = datetime(2026, 11, 20, 2, 30, tzinfo=UTC)


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, also from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class ScriptedJudge:
    """A stand-in for an LLM judge (``final_response_match_v2``): votes yes when the
    answer contains ``must_contain``, with the reasons and usage a real judge records."""

    must_contain: str
    fact: str
    name: str = "final_response_match_v2"
    label: str = "judge: answer agrees with reference"
    threshold: float = 0.5

    async def evaluate(self, ctx: CriterionContext) -> CriterionResult:
        answer = ctx.trial.final_response or ""
        yes = self.must_contain.lower() in answer.lower()
        reasoning = (
            f"The answer gives {self.fact}, as the reference does."
            if yes
            else f"The reference gives {self.fact}; the answer does not."
        )
        invocation = ctx.case.conversation[0]
        reference = invocation.expected_final_response
        votes = [
            {"verdict": "valid" if yes else "invalid", "reasoning": reasoning, "cached": False}
            for _ in range(3)
        ]
        details = {  # the shape final_response_match_v2 records
            "judge_model": "openai/gpt-4o-mini",
            "prompt_template": "final_response_match_v2@builtin",
            "num_samples": 3,
            "invocations": [
                {
                    "invocation_id": invocation.invocation_id,
                    "expected": reference.text if reference else "",
                    "actual": answer,
                    "votes": votes,
                    "valid": yes,
                    "reason": f"{3 if yes else 0} of 3 votes valid",
                }
            ],
            "judge_requests": 3,
            "judge_calls": 3,
            "cached_samples": 0,
            "failed_samples": 0,
        }
        usage = Usage(
            prompt_tokens=420, completion_tokens=60, total_tokens=480, cost_usd=0.00042, calls=3
        )
        return scored(
            self,
            1.0 if yes else 0.0,
            details,
            reason=None if yes else f"judged invalid: {invocation.invocation_id}",
            usage=usage,
            latency_ms=850.0,
        )


# A behaviour decides, per trial, what the agent did: (turns, error).
_WEATHER = {"New York": "sunny, 72°F", "Tokyo": "clear, 24°C", "London": "cloudy, 13°C"}


def _call(name: str, args: dict[str, Any], result: Any, ms: float) -> RecordedToolCall:
    return RecordedToolCall(name=name, args=args, result=result, duration_ms=ms)


def _usage(rng: random.Random, calls: int) -> Usage:
    prompt = rng.randint(300, 900) * calls
    completion = rng.randint(20, 120) * calls
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cost_usd=round(prompt * 0.15e-6 + completion * 0.6e-6, 6),
        calls=calls,
    )


UsageKind = Literal["priced", "uncaptured", "unpriced", "free"]
"""What a sample agent's model calls record: a price for each (``priced``), nothing at
all (``uncaptured``: calls the agent did not report), calls no price list knows
(``unpriced``), or calls known to cost nothing (``free``, a local model)."""


def _usage_as(turn: Turn, kind: UsageKind) -> Turn:
    """``turn`` with its model calls recording what ``kind`` says."""
    if kind == "priced":
        return turn
    events: list[Any] = []
    for event in turn.events:
        if not isinstance(event, ModelCallEvent):
            events.append(event)
        elif kind == "unpriced":
            used = event.usage
            unpriced = Usage.of_call(
                used.prompt_tokens, used.completion_tokens, None, calls=used.calls
            )
            events.append(event.model_copy(update={"usage": unpriced}))
        elif kind == "free":
            free = event.usage.model_copy(update={"cost_usd": 0.0})
            events.append(event.model_copy(update={"usage": free}))
    return turn.model_copy(update={"events": events})


def _turn(
    case: EvalCase,
    index: int,
    calls: list[RecordedToolCall],
    answer: str | None,
    rng: random.Random,
) -> Turn:
    invocation = case.conversation[index]
    return Turn(
        invocation_id=invocation.invocation_id,
        user_text=invocation.user_content.text,
        tool_calls=calls,
        final_response=answer,
        latency_ms=round(rng.uniform(600, 2400), 1),
        usage=_usage(rng, len(calls) + 1),
    )


def _with_sources(turn: Turn, rng: random.Random) -> Turn:
    """``turn`` with an answer over several lines: the answer, where it came from, and a
    closing line, as chat agents write them."""
    if turn.final_response is None:
        return turn
    tools = ", ".join(dict.fromkeys(call.name for call in turn.tool_calls)) or "memory"
    answer = (
        f"{turn.final_response}\n"
        f"Source: {tools} at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} UTC "
        f"(request {rng.getrandbits(48):012x}).\n"
        "Anything else?"
    )
    return turn.model_copy(update={"final_response": answer})


def _weather_case(eval_id: str, cities: list[str], answer: str) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": f"What's the weather in {' and '.join(cities)}?",
                "expected_tool_trajectory": [
                    {"name": "get_weather", "args": {"location": city}} for city in cities
                ],
                "expected_final_response": answer,
            }
        ],
    }


def _case_specs() -> list[tuple[str, dict[str, Any]]]:
    """(behaviour, case) pairs; behaviours are interpreted by :func:`_trial_turns`."""
    return [
        (
            "correct",
            _weather_case(
                "weather_lookup_simple",
                ["New York"],
                "The weather in New York is currently sunny with a temperature of 72°F.",
            ),
        ),
        (
            "flaky_args",
            _weather_case(
                "weather_multi_city",
                ["Tokyo", "London"],
                "Tokyo is clear at 24°C while London is cloudy at 13°C.",
            ),
        ),
        (
            "extra_call",
            {
                "eval_id": "flight_search_basic",
                "conversation": [
                    {
                        "user_content": "Find me a flight from Boston to Lisbon on 2026-12-03.",
                        "expected_tool_trajectory": [
                            {
                                "name": "search_flights",
                                "args": {
                                    "origin": "BOS",
                                    "destination": "LIS",
                                    "date": "2026-12-03",
                                },
                            }
                        ],
                        "expected_final_response": (
                            "The cheapest direct flight is TP 218 at 19:40 for $612."
                        ),
                    }
                ],
            },
        ),
        (
            "crashes",
            {
                "eval_id": "hotel_booking_two_turns",
                "conversation": [
                    {
                        "user_content": "Which hotels near the Alfama have rooms on Dec 3?",
                        "expected_tool_trajectory": [
                            {
                                "name": "search_hotels",
                                "args": {"area": "Alfama", "date": "2026-12-03"},
                            }
                        ],
                        "expected_final_response": (
                            "Memmo Alfama and Solar do Castelo have rooms on Dec 3."
                        ),
                    },
                    {
                        "user_content": "Book the Memmo for two nights.",
                        "expected_tool_trajectory": [
                            {"name": "book_hotel", "args": {"hotel": "Memmo Alfama", "nights": 2}}
                        ],
                        "expected_final_response": "Booked Memmo Alfama for two nights from Dec 3.",
                    },
                ],
            },
        ),
        (
            "wrong_tool",
            {
                "eval_id": "currency_conversion",
                "conversation": [
                    {
                        "user_content": "How much is 250 USD in EUR?",
                        "expected_tool_trajectory": [
                            {
                                "name": "convert_currency",
                                "args": {"amount": 250, "from": "USD", "to": "EUR"},
                            }
                        ],
                        "expected_final_response": "250 USD is about 231 EUR.",
                    }
                ],
            },
        ),
        (
            "payload",
            {
                "eval_id": "html_in_answer",
                "conversation": [
                    {
                        "user_content": "Summarise the <b>reviews</b> & quote one verbatim.",
                        "expected_tool_trajectory": [
                            {"name": "fetch_reviews", "args": {"hotel": "Memmo <Alfama>"}}
                        ],
                        "expected_final_response": "Guests praise the rooftop view.",
                    }
                ],
            },
        ),
    ]


def sample_eval_set(cases: int | None = None) -> tuple[EvalSet, list[str]]:
    """The eval set and each case's behaviour. ``cases`` above six repeats the behaviours
    under new ids (for size tests)."""
    specs = _case_specs()
    if cases is not None and cases != len(specs):
        repeated = []
        for index in range(cases):
            behaviour, spec = specs[index % len(specs)]
            spec = dict(spec, eval_id=f"{spec['eval_id']}_{index:03d}")
            repeated.append((behaviour, spec))
        specs = repeated
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "travel_agent_nightly",
            "name": "Travel agent — nightly",
            "eval_cases": [spec for _, spec in specs],
        }
    )
    return eval_set, [behaviour for behaviour, _ in specs]


def _trial_turns(
    behaviour: str, case: EvalCase, index: int, rng: random.Random, payload: str
) -> tuple[list[Turn], TrialError | None]:
    inv = case.conversation[0]
    expected = inv.expected_tool_trajectory
    reference = inv.expected_final_response.text if inv.expected_final_response else ""
    ms = lambda: round(rng.uniform(40, 400), 1)  # noqa: E731
    if behaviour == "correct":
        calls = [
            _call(c.name, dict(c.args), _WEATHER.get(c.args.get("location", ""), "n/a"), ms())
            for c in expected
        ]
        return [_turn(case, 0, calls, reference, rng)], None
    if behaviour == "flaky_args":
        calls = [_call(c.name, dict(c.args), _WEATHER[c.args["location"]], ms()) for c in expected]
        if index % 2 == 1:
            calls[1] = _call(
                "get_weather", {"location": "London, UK", "units": "metric"}, "cloudy, 13°C", ms()
            )
            answer = "Tokyo: clear, 24°C. London, UK: cloudy, 13°C."
        else:
            answer = reference
        return [_turn(case, 0, calls, answer, rng)], None
    if behaviour == "extra_call":
        calls = [
            _call("get_weather", {"location": "Lisbon"}, "sunny, 18°C", ms()),
            _call(
                expected[0].name,
                dict(expected[0].args),
                {"flights": [{"no": "TP 218", "price": 612}]},
                ms(),
            ),
        ]
        if index == 0:
            calls = calls[1:]
        answer = "The cheapest direct flight is TP 218 at 19:40 for $612 (and Lisbon is sunny)."
        return [_turn(case, 0, calls, answer, rng)], None
    if behaviour == "crashes":
        first = _turn(
            case,
            0,
            [
                _call(
                    "search_hotels",
                    {"area": "Alfama", "date": "2026-12-03"},
                    ["Memmo Alfama", "Solar do Castelo"],
                    ms(),
                )
            ],
            "Memmo Alfama and Solar do Castelo have rooms on Dec 3.",
            rng,
        )
        if index % 3 == 0:
            second_inv = case.conversation[1]
            calls = [
                _call(c.name, dict(c.args), {"confirmation": "MA-1234"}, ms())
                for c in second_inv.expected_tool_trajectory
            ]
            second = _turn(case, 1, calls, "Booked Memmo Alfama for two nights from Dec 3.", rng)
            return [first, second], None
        error = TrialError(
            kind="timeout" if index % 3 == 1 else "exception",
            message="no answer within 30 s"
            if index % 3 == 1
            else "book_hotel: HTTP 503 from booking API",
            type=None if index % 3 == 1 else "BookingUnavailable",
            traceback=None
            if index % 3 == 1
            else (
                'Traceback (most recent call last):\n  File "agent.py", line 88, in book\n'
                "    raise BookingUnavailable(resp.status)\nBookingUnavailable: 503"
            ),
        )
        return [first], error
    if behaviour == "wrong_tool":
        calls = [_call("web_search", {"query": "250 USD to EUR"}, "1 USD = 0.924 EUR", ms())]
        return [_turn(case, 0, calls, "250 USD is roughly 231 EUR at today's rate.", rng)], None
    if behaviour == "payload":
        calls = [
            _call(
                "fetch_reviews", {"hotel": "Memmo <Alfama>"}, '<img src=x onerror="alert(1)">', ms()
            )
        ]
        return [_turn(case, 0, calls, payload, rng)], None
    raise ValueError(f"unknown behaviour {behaviour!r}")


def sample_run(
    *,
    cases: int | None = None,
    trials: int = 5,
    seed: int = 7,
    simulated: bool = False,
    payload: str = XSS_ANSWER,
    with_expected: bool = True,
    run_id: str = "3f9a2c1e",
    multiline: bool = False,
    behaviour_of: dict[str, str] | None = None,
    usage: UsageKind = "priced",
) -> tuple[RunResult, EvalSet]:
    """A judged, aggregated run over :func:`sample_eval_set` and the eval set itself.
    ``with_expected`` copies each case's expectations into ``CaseResult.expected`` (as a
    runner that records them does). ``multiline`` makes every answer run over several
    lines, with what differs from trial to trial in a real run (times, request ids).
    ``behaviour_of`` gives some cases another behaviour (``{"weather_lookup_simple":
    "wrong_tool"}``: an agent that got worse there). ``usage`` says what the agent's
    model calls recorded (:data:`UsageKind`)."""
    rng = random.Random(seed)
    eval_set, behaviours = sample_eval_set(cases)
    if behaviour_of:
        behaviours = [
            behaviour_of.get(case.eval_id, behaviour)
            for case, behaviour in zip(eval_set.eval_cases, behaviours, strict=True)
        ]
    config = EvalConfig(
        criteria={
            "tool_trajectory_avg_score": CriterionConfig(threshold=1.0, match_type="IN_ORDER"),
            "response_match_score": CriterionConfig(threshold=0.6),
        }
    )
    judges = {
        "weather": ScriptedJudge("°", "the temperatures"),
        "flight": ScriptedJudge("TP 218", "the flight number TP 218"),
        "hotel": ScriptedJudge("Memmo", "the hotel name"),
        "currency": ScriptedJudge("231", "the amount in EUR (231)"),
        "html": ScriptedJudge("rooftop", "the rooftop view"),
    }

    async def judge_all() -> list[TrialResult]:
        results = []
        for case, behaviour in zip(eval_set.eval_cases, behaviours, strict=True):
            criteria = list(build_criteria(config, case))
            criteria.append(judges[next(k for k in judges if case.eval_id.startswith(k))])
            for index in range(trials):
                turns, error = _trial_turns(behaviour, case, index, rng, payload)
                turns = [_usage_as(turn, usage) for turn in turns]
                if multiline:
                    turns = [_with_sources(turn, rng) for turn in turns]
                started = START + timedelta(seconds=rng.uniform(0, 60))
                trial = Trial(
                    case_id=case.eval_id,
                    trial_index=index,
                    turns=turns,
                    error=error,
                    started_at=started,
                    duration_ms=round(sum(t.latency_ms for t in turns) + rng.uniform(5, 50), 1),
                )
                results.append(await judge_trial(case, trial, criteria, config, judge=None))
        return results

    judged = _run_sync(judge_all())
    meta = RunMeta(
        run_id=run_id,
        agent="travel-assistant",
        started_at=START,
        runs_per_case=trials,
        agent_model="openai/gpt-4o-mini",
        judge_model="openai/gpt-4o-mini",
        simulated=simulated,
        notes=("Nightly run on the staging deployment.",),
    )
    run = aggregate(
        eval_set, config, judged, meta, finished_at=START + timedelta(minutes=4, seconds=12)
    )
    by_id = {case.eval_id: case for case in eval_set.eval_cases}
    for case_result in run.cases:
        # aggregate() records them; drop them to stand for results written without them
        case_result.expected = expected_turns(by_id[case_result.case_id]) if with_expected else []
    return run, eval_set


def write_run_dir(directory: Path, run: RunResult) -> Path:
    """A finished run directory, as the report stage leaves it: report.html,
    results.json and junit.xml."""
    write_results_json(run, directory / "results.json")
    write_html(run, directory / "report.html")
    write_junit(run, directory / "junit.xml")
    return directory


def write_run_dir_streamed(directory: Path, run: RunResult, eval_set: EvalSet) -> Path:
    """A finished run directory as a real run's report stage writes it: ``judged.jsonl``
    with the trials in the order they finished (shuffled), then the three reports
    written from it case by case (:func:`~agentflow_eval.report.writer.write_run_reports`)."""
    paths = RunPaths(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lines = [trial.model_dump_json() for trial in run.trials]
    random.Random(5).shuffle(lines)
    paths.judged.write_text("\n".join(lines) + "\n", encoding="utf-8")
    meta = RunMeta(
        run_id=run.run_id,
        agent=run.agent,
        started_at=run.started_at,
        runs_per_case=run.runs_per_case,
        agent_model=run.agent_model,
        judge_model=run.judge_model,
        simulated=run.simulated,
        notes=tuple(run.notes),
    )
    config = EvalConfig.model_validate(run.config)
    digest = TrialDigest()
    summary, trials = aggregate_judged(
        eval_set, config, paths.judged, meta, on_trial=digest.add, finished_at=run.finished_at
    )
    write_run_reports(summary, trials, digest, directory)
    return directory


LOCAL_RUNS = (  # (eval set, run id, started), as an --output folder holds them
    ("travel", "aaaa1111", datetime(2026, 11, 20, 9, 0, tzinfo=UTC)),
    ("travel", "bbbb2222", datetime(2026, 11, 22, 9, 0, tzinfo=UTC)),
    ("support", "cccc3333", datetime(2026, 11, 21, 9, 0, tzinfo=UTC)),
)


def write_output_folder(root: Path) -> list[Path]:
    """An ``--output`` folder holding the finished runs of :data:`LOCAL_RUNS` (two eval
    sets) and a run still going (no results.json); the finished run folders, in order."""
    run, _ = sample_run(trials=2)
    folders = []
    for eval_set, run_id, started in LOCAL_RUNS:
        copy = run.model_copy(
            update={"eval_set_id": eval_set, "run_id": run_id, "started_at": started}
        )
        folders.append(write_run_dir(root / eval_set / f"{started:%Y%m%dT%H%M%SZ}-{run_id}", copy))
    (root / "travel" / "20261123T090000Z-dddd4444").mkdir()
    return folders
