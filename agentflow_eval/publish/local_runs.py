"""The runs under a local output folder (``eval-results/<eval set>/<time>-<run id>/``),
as the history index lists published ones: one :class:`RunsManifest` per eval set, its
entries' folders relative to the eval set's folder, newest first. Run folders whose
``results.json`` is missing or unreadable (a run still going, one that stopped) are
counted apart, never silently dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentflow_eval.compare.baseline import read_run_comparison
from agentflow_eval.errors import InputError
from agentflow_eval.files.results_json import read_results_json
from agentflow_eval.publish.comparison_digest import comparison_digest
from agentflow_eval.run.efficiency import run_efficiency
from agentflow_eval.storage.history import ComparisonDigest, RunsManifest, run_entry

__all__ = ["LocalRuns", "local_runs", "newest_report"]

RUN_FILES = ("report.html", "results.json", "junit.xml")


@dataclass(frozen=True)
class LocalRuns:
    """Every readable run under an output folder, by eval set (the folders' names)."""

    manifests: dict[str, RunsManifest] = field(default_factory=dict)
    """Per eval set folder name: its runs, newest first."""
    unreadable: list[Path] = field(default_factory=list)
    """Run folders without a readable results.json."""

    @property
    def run_count(self) -> int:
        return sum(len(m.runs) for m in self.manifests.values())


def _run_folders(output_dir: Path) -> list[Path]:
    return sorted(
        run_dir
        for set_dir in output_dir.iterdir()
        if set_dir.is_dir() and not set_dir.name.startswith(".")
        for run_dir in set_dir.iterdir()
        if run_dir.is_dir() and not run_dir.name.startswith(".")
    )


def local_runs(output_dir: Path) -> LocalRuns:
    """The runs under ``output_dir`` (an ``--output`` folder)."""
    if not output_dir.is_dir():
        raise InputError(f"{output_dir}: no such folder of runs")
    found = LocalRuns()
    for run_dir in _run_folders(output_dir):
        results = run_dir / "results.json"
        if not results.is_file():
            found.unreadable.append(run_dir)
            continue
        try:
            run = read_results_json(results)
        except (InputError, OSError):
            found.unreadable.append(run_dir)
            continue
        set_name = run_dir.parent.name
        files = [name for name in RUN_FILES if (run_dir / name).is_file()]
        entry = run_entry(
            run,
            run_dir.name,
            files,
            run.finished_at,
            comparison=_comparison(run_dir),
            efficiency=run_efficiency(run),
        )
        manifest = found.manifests.get(set_name) or RunsManifest(eval_set_id=run.eval_set_id)
        found.manifests[set_name] = manifest.with_run(entry, run.eval_set_name or "")
    return found


def _comparison(run_dir: Path) -> ComparisonDigest | None:
    """The digest of the run's comparison.json; None without one, or when it cannot be
    read (the run is still listed: its comparison is not what makes it a run)."""
    try:
        record = read_run_comparison(run_dir)
    except (InputError, OSError):
        return None
    return comparison_digest(record) if record is not None else None


def newest_report(output_dir: Path) -> Path | None:
    """The report of the newest run (by when it started) under ``output_dir``."""
    runs = local_runs(output_dir)
    newest = max(
        (
            (entry.started_at, set_name, entry.folder)
            for set_name, manifest in runs.manifests.items()
            for entry in manifest.runs
            if "report.html" in entry.files
        ),
        default=None,
    )
    if newest is None:
        return None
    _, set_name, folder = newest
    return output_dir / set_name / folder / "report.html"
