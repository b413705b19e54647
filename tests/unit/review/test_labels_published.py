"""A run's labels travel with it: published beside its reports, and added to the label
bank under the publish target, where a later run published there finds them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.publish.publisher import publish_run, run_folder
from agentflow_eval.review.bank import BANK_PREFIX, LabelBank
from agentflow_eval.review.labels import LABELS_FILE, Label, append_labels
from agentflow_eval.storage.local import LocalStore
from tests.support.judged_runs import planted_run
from tests.support.sample_results import write_run_dir

AT = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


def test_publishing_uploads_the_labels_and_banks_them(tmp_path: Path) -> None:
    planted = planted_run(cases=10, trials=2)
    run_dir = write_run_dir(tmp_path / "run", planted.run)
    verdicts = [r for t in planted.run.trials for r in t.criteria][:5]
    labels = [
        Label(
            run_id=planted.run.run_id,
            case_id="case_000",
            trial=0,
            criterion=verdict.criterion,
            content_key=verdict.details["content_key"],
            label="pass",
            reviewer="ana",
            labelled_at=AT,
        )
        for verdict in verdicts
    ]
    append_labels(run_dir, labels)
    target = tmp_path / "published"

    outcome = publish_run(run_dir, target, sleep=lambda _: None)

    assert outcome.published, outcome.message
    folder = target / planted.run.eval_set_id / run_folder(planted.run)
    assert (folder / LABELS_FILE).read_bytes() == (run_dir / LABELS_FILE).read_bytes()
    assert "labels" in outcome.urls
    bank = LabelBank(LocalStore(target))
    keys = [label.content_key for label in labels if label.content_key]
    assert sorted(bank.labels_for(keys), key=str) == sorted(labels, key=str)
    assert (target / BANK_PREFIX).is_dir()
    # publishing again adds nothing twice
    publish_run(run_dir, target, sleep=lambda _: None)
    assert len(bank.labels_for(keys)) == len(labels)


def test_a_run_without_labels_publishes_as_before(tmp_path: Path) -> None:
    planted = planted_run(cases=3, trials=2)
    run_dir = write_run_dir(tmp_path / "run", planted.run)
    outcome = publish_run(run_dir, tmp_path / "published", sleep=lambda _: None)
    assert outcome.published and "labels" not in outcome.urls
    assert not (tmp_path / "published" / BANK_PREFIX).exists()
