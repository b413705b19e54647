"""Trials spent, drops found and false flags of the adaptive paired design against fixed
designs: ``python benchmarks/adaptive_power.py [--repetitions 300]``.

**Simulated** (``tests/support/sequential_sim.py``, through the design's own ledger and
waves): 40 cases, half at 90-100 %, a third at 60-90 %, the rest at 20-60 %; 3 cases
dropped by 20-40 points; every case's evidence looked at after every pair. For the
adaptive design at several budgets (both agents' trials): the share of dropped cases
flagged (power), trials spent, and, in A/A (no case dropped), the share of runs with any
case flagged (family-wise error). For fixed designs (the exact per-case test with Holm's
correction at 5, 20 and 74 runs per side): the same power, computed exactly.

**Measured**: a real paired run of the test agents (``tests/support/paired_agents.py``)
on the scripted server at 50 ms a call, 20 cases with 3 dropped: adaptive at a budget
of 800 trials against a fixed paired run of 20 pairs per case (800 trials): wall time
and what each found.

Prints Markdown; the figures go to ``benchmarks/RESULTS.md`` by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import numpy as np  # noqa: E402
from support import paired_agents  # noqa: E402
from support.sequential_sim import CASES, baseline_rates, simulate  # noqa: E402

from agentflow_eval.compare.power import regression_power  # noqa: E402
from agentflow_eval.compare.sequential import Design  # noqa: E402
from agentflow_eval.models.request import RunRequest  # noqa: E402
from agentflow_eval.pipeline.execute import execute  # noqa: E402
from agentflow_eval.testing import ScriptedOpenAIServer  # noqa: E402

ALPHA = 0.05
BUDGETS = (800, 1200, 1600, 2400)
FIXED_RUNS = (5, 20, 74)


def simulated(repetitions: int) -> list[str]:
    rng = np.random.default_rng(2026)
    lines = [
        "| design | trials (both agents) | power per dropped case | A/A runs with a false flag |",
        "|---|---:|---:|---:|",
    ]
    for budget in BUDGETS:
        design = Design(alpha=ALPHA, max_trials=budget)
        runs = [simulate(rng, list(rng.uniform(0.2, 0.4, 3)), design) for _ in range(repetitions)]
        power = sum(r.flagged_dropped for r in runs) / sum(r.dropped for r in runs)
        aa = [simulate(rng, [], design) for _ in range(repetitions)]
        false = sum(r.false_flags > 0 for r in aa) / len(aa)
        spent = np.mean([r.trials for r in runs])
        lines.append(f"| adaptive, budget {budget:,} | {spent:,.0f} | {power:.2f} | {false:.3f} |")
    level = ALPHA / (2 * CASES)
    draws = [(p, d) for p, d in zip(baseline_rates(rng), rng.uniform(0.2, 0.4, CASES), strict=True)]
    for n in FIXED_RUNS:
        power = float(
            np.mean([regression_power(p, max(0.0, p - d), n, n, level) for p, d in draws])
        )
        lines.append(f"| fixed, {n} runs per side | {2 * CASES * n:,} | {power:.2f} | ≤ 0.05 |")
    return lines


async def measured() -> list[str]:
    lines = [
        "| real paired run (20 cases, 3 dropped, 50 ms a call) | trials | wall | dropped cases "
        "flagged | other cases flagged |",
        "|---|---:|---:|---:|---:|",
    ]
    agents = Path(paired_agents.__file__)
    with (
        tempfile.TemporaryDirectory() as folder,
        ScriptedOpenAIServer(handler=paired_agents.handler(0.05)) as server,
    ):
        os.environ["PAIRED_TEST_SERVER"] = server.url
        evalset = Path(folder) / "paired.evalset.json"
        evalset.write_text(json.dumps(paired_agents.evalset()))
        base = RunRequest(
            agent=f"{agents}:dropped",
            against=f"{agents}:steady_a",
            evalset=str(evalset),
            output_dir=folder,
            max_concurrency=16,
        )
        for name, request in (
            ("adaptive, 5 pairs then waves, budget 800", base.updated(
                runs=5, until_decided=True, max_trials=800
            )),
            ("fixed, 20 pairs per case", base.updated(runs=20)),
        ):  # fmt: skip
            started = time.perf_counter()
            outcome = await execute(request)
            wall = time.perf_counter() - started
            assert outcome.comparison is not None and outcome.comparison.comparison is not None
            summary = outcome.comparison.comparison.sequential
            assert summary is not None
            flagged = {c.case_id for c in summary.cases if c.status == "regressed"}
            found = len(flagged & set(paired_agents.DROPPED))
            other = len(flagged - set(paired_agents.DROPPED))
            lines.append(f"| {name} | {summary.trials:,} | {wall:.1f} s | {found} of 3 | {other} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    print("### Simulated: 40 cases, 3 dropped by 20-40 points, α = 0.05\n")
    print("\n".join(simulated(args.repetitions)))
    print("\n### Measured: real paired runs on the scripted server\n")
    print("\n".join(asyncio.run(measured())))


if __name__ == "__main__":
    main()
