"""Comparing a candidate run with its baseline, with the statistics behind the verdict.

    side = load_side("latest", publish_to="s3://bucket/evals", eval_set_id="travel")
    comparison = compare_runs(side.run, candidate_run, alpha=0.05)
    comparison.overall.verdict, [(c.case_id, c.verdict) for c in comparison.cases]

Modules, one job each: :mod:`.reading` (a results.json's summaries without its trials),
:mod:`.sides` (run folders, S3, ``latest``), :mod:`.exact` (the per-case exact test and
Holm's correction), :mod:`.paired` (the overall change paired by case), :mod:`.power`
(what the per-case test can detect), :mod:`.criteria` (criterion means on both sides),
:mod:`.efficiency` (cost, tokens, latency and tool calls against the baseline),
:mod:`.divergence` (where a regressed case's trajectories part ways),
:mod:`.comparison` (all of it together),
:mod:`.models` (the result, as ``--json`` prints it), :mod:`.render` (the terminal view).
"""

from agentflow_eval.compare.comparison import (
    DEFAULT_ALPHA,
    DEFAULT_DETECT_DROP,
    ComparisonError,
    compare_runs,
)
from agentflow_eval.compare.models import (
    CaseComparison,
    CaseCounts,
    Comparison,
    CriterionChange,
    OverallChange,
    PowerSummary,
    RunInfo,
    Verdict,
)
from agentflow_eval.compare.reading import read_run_summary, run_summary_from_stream
from agentflow_eval.compare.render import (
    console_for,
    format_overall,
    format_power,
    print_comparison,
)
from agentflow_eval.compare.sides import LATEST, Side, SideError, is_latest, load_side

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_DETECT_DROP",
    "LATEST",
    "CaseComparison",
    "CaseCounts",
    "Comparison",
    "ComparisonError",
    "CriterionChange",
    "OverallChange",
    "PowerSummary",
    "RunInfo",
    "Side",
    "SideError",
    "Verdict",
    "compare_runs",
    "console_for",
    "format_overall",
    "format_power",
    "is_latest",
    "load_side",
    "print_comparison",
    "read_run_summary",
    "run_summary_from_stream",
]
