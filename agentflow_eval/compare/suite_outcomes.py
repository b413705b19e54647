"""Each eval set's outcome in a regression suite, from what its evaluate run published.

The suite does not trust what an evaluate run returned (a flow run of a deployment ran on
another worker): it finds the run in the eval set's ``runs.json`` by the label the suite
gave it, and reads the ``comparison.json`` published beside it. An eval set whose run is
not there has no evaluated run to show, and says why (its flow run's final state, or the
store that could not be read).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentflow_eval.compare.models import RunComparison
from agentflow_eval.compare.suite import EvalSetOutcome, failed_outcome, outcome_of_published_run
from agentflow_eval.errors import StoreError
from agentflow_eval.files.errors import EvalFileError
from agentflow_eval.files.limits import UnreadableFile, validate_json
from agentflow_eval.files.loading import eval_file_stem, load_evalset
from agentflow_eval.models.regression import REGRESSION_LABEL
from agentflow_eval.storage.base import ObjectStore
from agentflow_eval.storage.history import RunEntry, find_labelled_run, published_url
from agentflow_eval.storage.keys import join_key, key_part

__all__ = ["EvalSetIdentity", "FlowRunEnd", "eval_set_identity", "outcome_of_entry"]


@dataclass(frozen=True)
class EvalSetIdentity:
    """An eval set's id (its folder under the publish target) and name."""

    eval_set_id: str
    name: str = ""
    problem: str | None = None
    """Why the file could not be read (the id is then the file's stem, a guess)."""


def eval_set_identity(path: str) -> EvalSetIdentity:
    """The id and name of the eval set at ``path`` (a file or a folder). A file that cannot
    be read is named by its stem; its evaluate run fails on it and says why."""
    try:
        eval_set = load_evalset(path).eval_set
    except (EvalFileError, OSError, ValueError) as exc:
        text = str(exc).strip().splitlines()
        return EvalSetIdentity(eval_file_stem(path), "", text[0] if text else type(exc).__name__)
    return EvalSetIdentity(eval_set.eval_set_id, eval_set.name or "")


@dataclass(frozen=True)
class FlowRunEnd:
    """How an eval set's evaluate flow run ended: its name, its final state's name
    (``Completed``, ``Failed``, ``Crashed``...) and that state's message."""

    name: str | None
    state: str | None
    message: str | None = None
    completed: bool = False


def outcome_of_entry(
    store: ObjectStore,
    *,
    index: int,
    agent: str,
    identity: EvalSetIdentity,
    tag: str,
    baseline: str,
    flow_run: FlowRunEnd,
) -> EvalSetOutcome:
    """Eval set ``index``'s outcome: its run labelled ``tag`` in ``store`` against its
    baseline, or ``failed`` naming why there is none."""

    def failed(problem: str) -> EvalSetOutcome:
        return failed_outcome(
            index=index,
            agent=agent,
            eval_set_id=identity.eval_set_id,
            eval_set_name=identity.name,
            baseline=baseline,
            problem=problem,
            flow_run=flow_run.name,
            flow_run_state=flow_run.state,
        )

    try:
        entry = find_labelled_run(store, identity.eval_set_id, REGRESSION_LABEL, tag)
        if entry is None:
            if flow_run.completed:
                why = (
                    f"its evaluate run completed but no run labelled {REGRESSION_LABEL}={tag} "
                    f"is in {store.describe()}/{identity.eval_set_id}/runs.json (its report "
                    "was not published: see the flow run's summary)"
                )
            else:
                state = flow_run.state or "without a final state"
                why = f"its evaluate run ended {state}" + (
                    f": {flow_run.message}" if flow_run.message else ""
                )
                if identity.problem:
                    why += f" ({identity.problem})"
            return failed(why)
        record = published_comparison(store, identity.eval_set_id, entry)
        report_url = published_url(store, identity.eval_set_id, entry, "report.html")
    except StoreError as exc:
        return failed(f"its published run could not be read: {exc}")
    except UnreadableFile as exc:
        return failed(f"its published comparison.json could not be read ({exc.problem})")
    return outcome_of_published_run(
        index=index,
        agent=agent,
        entry=entry,
        eval_set_id=identity.eval_set_id,
        eval_set_name=identity.name,
        record=record,
        baseline=baseline,
        report_url=report_url,
        flow_run=flow_run.name,
        flow_run_state=flow_run.state,
    )


def published_comparison(
    store: ObjectStore, eval_set_id: str, entry: RunEntry
) -> RunComparison | None:
    """The comparison.json published with ``entry``, or None for a run not compared."""
    if "comparison.json" not in entry.files:
        return None
    key = join_key(key_part(eval_set_id), entry.folder, "comparison.json")
    raw = store.get(key)
    return None if raw is None else validate_json(RunComparison, raw, f"{store.describe()}: {key}")
