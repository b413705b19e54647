"""The trial stage: every (case × trial) of a plan as a coroutine, at most
``max_concurrency`` at once, each finished trial appended to the run's ``trials.jsonl``
as soon as it finishes. Trials already in the file are skipped, so a stopped run resumes
where it stopped.

A watchdog (:mod:`agentflow_eval.run.loop_watchdog`) watches the event loop meanwhile,
so an async agent that blocks it fails its trial instead of stalling the run. Each trial
keeps what its agent printed, the processes it started end with it, and an ``os._exit``
it calls fails it alone (:mod:`agentflow_eval.run.trial_scope`). When a
provider refuses the run's credentials, no further trial starts, the trials that the
refusal cut short are not written (a resume runs them again), and the stage raises
:class:`~agentflow_eval.llm.retry.ProviderAuthError`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from agentflow_eval.agents.base import AgentUnderTest
from agentflow_eval.agents.tool_simulator import InMemorySimulationCache, SimulationCache
from agentflow_eval.criteria.judges.cache import JudgeCache
from agentflow_eval.environments.mcp import McpServerFailed, McpTool, started_servers
from agentflow_eval.errors import RunStopped
from agentflow_eval.files.jsonl import JsonlWriter
from agentflow_eval.files.naming import printable
from agentflow_eval.llm.client import ModelClient
from agentflow_eval.llm.retry import ProviderAuthError
from agentflow_eval.models.config import JudgeSettings
from agentflow_eval.models.evalset import EvalCase, EvalSet
from agentflow_eval.models.results import Trial, TrialError
from agentflow_eval.run.component_trial import run_component_trial
from agentflow_eval.run.loop_watchdog import DEFAULT_LIMIT_S, LoopBlock, LoopWatchdog
from agentflow_eval.run.plan import RunPlan
from agentflow_eval.run.resumable import StageCounts, TrialKey, completed_keys, run_pool
from agentflow_eval.run.sigint import SigintSeen
from agentflow_eval.run.simulation_cache import KeptSimulationCache
from agentflow_eval.run.trial import run_trial
from agentflow_eval.run.trial_scope import TrialIsolation
from agentflow_eval.run.user_turns import turn_sources

__all__ = ["UNSTOPPABLE_EXIT_CODE", "run_paired_trials", "run_trials", "trial_plan"]


UNSTOPPABLE_EXIT_CODE = 3
"""The process's exit status when an agent held the event loop past every interruption:
the CLI's "the run could not go on" (finish it with ``--resume``)."""


def _give_up(plan: RunPlan, writer: JsonlWriter[Trial], block: LoopBlock, key: Any) -> None:
    """An agent holds the event loop and swallows every interruption: the one thread
    this process runs trials, judges and reports on is the agent's for good. Record its
    trial as errored (the loop thread is stuck inside the agent, not writing), say so
    with what to do, and end the process; the run folder resumes without that trial."""
    case_id, index = key
    seconds = block.seconds
    writer.write(
        Trial(
            case_id=case_id,
            trial_index=index,
            started_at=datetime.now(UTC) - timedelta(seconds=seconds),
            duration_ms=seconds * 1000,
            error=TrialError(
                kind="timeout",
                type="EventLoopBlocked",
                message=(
                    f"the agent blocked the event loop ({block.where}) and ignored every "
                    f"interruption for {seconds:.0f} s: abandoned, and the run ended with it"
                ),
            ),
        )
    )
    print(
        f"agentflow-eval: error: the agent blocked the event loop in trial {index + 1} of "
        f"case '{printable(case_id, keep_newlines=False)}' ({block.where}) and ignored "
        "every interruption; that "
        "trial is recorded as errored and this process cannot go on: finish the run with "
        f"--resume {plan.paths.run_dir}",
        file=sys.__stderr__,
        flush=True,
    )
    os._exit(UNSTOPPABLE_EXIT_CODE)


def trial_plan(eval_set: EvalSet, runs: int) -> Iterator[tuple[EvalCase, int]]:
    """Every (case, trial index), case by case."""
    for case in eval_set.eval_cases:
        for index in range(runs):
            yield case, index


class _Trials:
    """What a trial stage holds while its trials run: the loop watchdog, the Ctrl-C
    watch, each trial's isolation, and the provider refusal that stops it; one per
    stage, however many run folders its trials go to."""

    def __init__(
        self,
        timeout_s: float,
        counts: StageCounts,
        kept: JudgeCache | None = None,
        judging: JudgeSettings | None = None,
    ) -> None:
        # an agent that blocks the loop and swallows every interruption is given up on
        # after a trial timeout's worth of the loop's own work (the grace README states)
        self.watchdog = LoopWatchdog(
            limit_s=min(DEFAULT_LIMIT_S, timeout_s), abandon_after_s=timeout_s
        )
        self.sigint = SigintSeen()
        self.isolation = TrialIsolation()
        self.refused: list[ProviderAuthError] = []
        self.counts = counts
        # the stage's trials share one cache of simulated tools' replies: trials that
        # reach the same simulated state with the same call pay for one reply; kept
        # with the judges' replies when the run keeps those, so a run again pays none
        self.simulation_cache: SimulationCache = InMemorySimulationCache()
        if kept is not None:
            self.simulation_cache = KeptSimulationCache(
                kept,
                refresh=judging is not None and judging.refresh_cache,
                expires_in_s=judging.cache_expiration_s if judging is not None else None,
            )
        self.shared_tools: dict[int, tuple[McpTool, ...]] = {}
        """The tools of each plan's run-scoped MCP servers (by the plan's ``id``)."""

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        with self.watchdog.watching(), self.sigint.watching(), self.isolation.watching():
            yield

    async def run(
        self,
        plan: RunPlan,
        writer: JsonlWriter[Trial],
        agent: AgentUnderTest | None,
        models: ModelClient,
        case: EvalCase,
        index: int,
        on_trial: Callable[[Trial], None] | None = None,
    ) -> None:
        """Run trial ``index`` of ``case`` for ``plan`` and write it (not when a provider
        refused the credentials: the run is stopping, and a resume runs it again)."""
        if self.refused:  # the run is stopping: start nothing more
            return
        settings = dataclasses.replace(plan.trial_settings, simulation_cache=self.simulation_cache)
        shared = self.shared_tools.get(id(plan), ())
        if shared:
            settings = dataclasses.replace(settings, shared_mcp_tools=shared)
        # the trial's calls say whose they are (a plugin's model may answer by trial)
        trial_models = models.tagged(case=case.eval_id, trial=str(index))
        try:
            with self.isolation.trial(case.eval_id, index) as scope:
                if case.component is not None:
                    trial = await run_component_trial(
                        plan.components[case.eval_id],
                        case,
                        index,
                        settings.timeout_s,
                        watchdog=self.watchdog,
                        sigint=self.sigint,
                        grace_s=settings.cancel_grace_s,
                    )
                else:
                    if agent is None:
                        raise ValueError(f"case {case.eval_id!r} needs an agent; none was given")
                    trial = await run_trial(
                        agent,
                        case,
                        index,
                        settings,
                        turn_sources(plan.config)(case, trial_models),
                        trial_models,
                        watchdog=self.watchdog,
                        sigint=self.sigint,
                    )
            trial = await self.isolation.finished(trial, scope)
        except ProviderAuthError as exc:
            self.refused.append(exc)
            return
        if models.auth_failure is not None:
            # refused credentials the agent caught and answered around: the trial is not
            # what a working key would give, so it is not kept
            self.refused.append(models.auth_failure)
            return
        writer.write(trial)
        self.counts.written += 1
        self.counts.errored += trial.error is not None
        if on_trial is not None:
            on_trial(trial)

    @contextlib.asynccontextmanager
    async def mcp_servers(self, *plans: RunPlan) -> AsyncIterator[None]:
        """The plans' run-scoped MCP servers, started before the first trial and stopped
        after the last (however the stage ends). One that does not start stops the run
        before any trial: every trial would be missing its tools."""
        async with contextlib.AsyncExitStack() as stack:
            for plan in plans:
                specs = [spec for spec in plan.config.mcp_servers if spec.scope == "run"]
                try:
                    tools = await stack.enter_async_context(started_servers(specs))
                except McpServerFailed as failed:
                    raise RunStopped(f"{failed}; no trial was run") from None
                self.shared_tools[id(plan)] = tools
            yield

    def stop_if_refused(self, plan: RunPlan) -> None:
        if self.refused:
            error = self.refused[0]
            error.run_dir = str(plan.paths.run_dir)  # where the run can be resumed from
            raise error


async def run_trials(
    plan: RunPlan,
    agent: AgentUnderTest | None,
    models: ModelClient,
    *,
    on_trial: Callable[[Trial], None] | None = None,
    kept: JudgeCache | None = None,
) -> StageCounts:
    """Run every trial of ``plan`` not yet in its trials file, the agent's and the
    simulated user's model calls going through ``models``; ``on_trial`` sees each trial
    as it finishes; simulated tools' replies are kept in ``kept`` (the run's judge
    cache) when given. A component case's trials call its function, loaded with the plan
    (``plan.components``); the other cases' run ``agent`` (``None`` only when there are
    no other cases, as planning checked)."""
    started = time.perf_counter()
    done = completed_keys(plan.paths.trials)
    counts = StageCounts(skipped=len(done))
    pending = (
        (case, index)
        for case, index in trial_plan(plan.eval_set, plan.runs)
        if (case.eval_id, index) not in done
    )
    stage = _Trials(plan.trial_settings.timeout_s, counts, kept, plan.config.judge)
    with JsonlWriter[Trial](plan.paths.trials) as writer, stage.watching():
        stage.watchdog.on_unstoppable = partial(_give_up, plan, writer)

        async def run_one(item: tuple[EvalCase, int]) -> None:
            case, index = item
            await stage.run(plan, writer, agent, models, case, index, on_trial)

        async with stage.mcp_servers(plan):
            await run_pool(pending, run_one, plan.settings.max_concurrency)
    counts.elapsed_s = time.perf_counter() - started
    stage.stop_if_refused(plan)
    return counts


async def run_paired_trials(
    candidate: RunPlan,
    baseline: RunPlan,
    agents: tuple[AgentUnderTest | None, AgentUnderTest | None],
    models: ModelClient,
    keys: Sequence[TrialKey],
    *,
    seed: str,
    kept: JudgeCache | None = None,
) -> StageCounts:
    """Run the pairs ``keys`` (case, trial index) of a paired run: trial ``j`` of the
    candidate's agent and of the baseline's on the same case start together, in an order
    drawn at random for the pair (from ``seed``, the same on a resume), each written to
    its own run's trials file; what a run's file holds already is not run again. The
    pairs share the run's concurrency (a pair holds two trials in flight)."""
    started = time.perf_counter()
    sides = (candidate, baseline)
    done = [completed_keys(plan.paths.trials) for plan in sides]
    counts = StageCounts(skipped=sum(len(d & set(keys)) for d in done))
    cases = {case.eval_id: case for case in candidate.eval_set.eval_cases}
    pending = [key for key in keys if key not in done[0] or key not in done[1]]
    stage = _Trials(candidate.trial_settings.timeout_s, counts, kept, candidate.config.judge)
    with (
        JsonlWriter[Trial](candidate.paths.trials) as first,
        JsonlWriter[Trial](baseline.paths.trials) as second,
        stage.watching(),
    ):
        writers = (first, second)
        stage.watchdog.on_unstoppable = partial(_give_up, candidate, first)

        async def run_pair(key: TrialKey) -> None:
            case_id, index = key
            order = [0, 1]
            random.Random(f"{seed}/{case_id}/{index}").shuffle(order)
            await asyncio.gather(
                *(
                    stage.run(sides[i], writers[i], agents[i], models, cases[case_id], index)
                    for i in order
                    if key not in done[i]
                )
            )

        async with stage.mcp_servers(*sides):
            await run_pool(pending, run_pair, max(1, candidate.settings.max_concurrency // 2))
    counts.elapsed_s = time.perf_counter() - started
    stage.stop_if_refused(candidate)
    return counts
