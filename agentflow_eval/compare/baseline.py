"""A run compared with its baseline, as ``run --baseline`` and the flows do it, and the
``comparison.json`` that records it in the run folder.

The comparison never stops a run: a baseline that cannot be found or read becomes a
:class:`~agentflow_eval.compare.models.BaselineProblem` in the record, which the reports,
the run summary and an event state. ``latest`` is the newest published completed run of
the same eval set and the same agent (and model) other than the run itself.
"""

from __future__ import annotations

from pathlib import Path

from agentflow_eval.compare.comparison import DEFAULT_ALPHA, ComparisonError, compare_runs
from agentflow_eval.compare.models import BaselineProblem, RunComparison
from agentflow_eval.compare.sides import LATEST, NoEarlierRun, OtherAgent, SideError, load_side
from agentflow_eval.errors import StoreError
from agentflow_eval.files.atomic import write_text_atomically
from agentflow_eval.files.limits import read_file_bytes, validate_json
from agentflow_eval.models.request import S3Options
from agentflow_eval.models.results import RunResult
from agentflow_eval.models.tolerances import EfficiencyTolerances
from agentflow_eval.storage.history import AgentIdentity
from agentflow_eval.storage.targets import S3Credentials

__all__ = [
    "COMPARISON_FILE",
    "compare_with_baseline",
    "is_bare_latest",
    "read_run_comparison",
    "write_run_comparison",
]

COMPARISON_FILE = "comparison.json"
"""The comparison's file in a run folder, beside results.json (and published with it)."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def compare_with_baseline(
    run: RunResult,
    baseline: str,
    *,
    publish_to: str | None = None,
    s3: S3Options | None = None,
    credentials: S3Credentials | None = None,
    alpha: float = DEFAULT_ALPHA,
    candidate_source: str = "",
    fail_on_regression: bool = False,
    tolerances: EfficiencyTolerances | None = None,
) -> RunComparison:
    """Compare ``run`` (its summary is enough) with ``baseline``: ``latest`` (the newest
    published run of the eval set under ``publish_to``, never ``run`` itself), a run
    folder, a results.json or an ``s3://`` location; ``tolerances``: the efficiency
    increases that are no regression. Never raises for the baseline: what went wrong is
    the record's ``problem``."""
    record = RunComparison(baseline=baseline, fail_on_regression=fail_on_regression)
    try:
        side = load_side(
            baseline,
            publish_to=publish_to,
            eval_set_id=run.eval_set_id,
            exclude_run_id=run.run_id,
            s3=s3,
            credentials=credentials,
            agent=AgentIdentity.of(run),
        )
        if side.run.run_id == run.run_id:
            raise SideError(f"{side.source}: the baseline is this very run ({run.run_id})")
        record.comparison = compare_runs(
            side.run,
            run,
            alpha=alpha,
            baseline_source=side.source,
            candidate_source=candidate_source,
            tolerances=tolerances,
        )
    except OtherAgent as exc:
        record.problem = BaselineProblem(kind="other-agent", message=_first_line(exc))
    except NoEarlierRun as exc:
        record.problem = BaselineProblem(kind="no-earlier-run", message=_first_line(exc))
    except (SideError, ComparisonError, StoreError, OSError) as exc:
        record.problem = BaselineProblem(kind="unavailable", message=_first_line(exc))
    return record


def write_run_comparison(run_dir: Path, record: RunComparison) -> Path:
    """Write ``record`` as the run folder's comparison.json (atomically)."""
    return write_text_atomically(run_dir / COMPARISON_FILE, [record.model_dump_json(indent=2)])


def read_run_comparison(run_dir: Path) -> RunComparison | None:
    """The run folder's comparison.json, or None when the run was not compared."""
    path = run_dir / COMPARISON_FILE
    if not path.is_file():
        return None
    return validate_json(RunComparison, read_file_bytes(path, what="a comparison.json"), path)


def is_bare_latest(baseline: str | None) -> bool:
    """Whether ``baseline`` is the bare word ``latest`` (which needs a publish target)."""
    return baseline is not None and baseline.strip().rstrip("/") == LATEST
