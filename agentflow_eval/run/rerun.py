"""Re-run only the errored trials of a finished run, in a new run folder.

``agentflow-eval run --rerun-errored RUN_DIR`` copies the run into a fresh folder beside
it — its parameters, every trial that finished and its verdicts — leaving out the trials
that errored (a provider outage, a timeout, a crash since fixed). Resuming that folder
then runs just those trials again, judges them, and reports the whole run. The original
folder is left as it was, so both outcomes can be compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentflow_eval.files.jsonl import iter_lines_with_offsets, parse_record
from agentflow_eval.run.paths import RunPaths, new_run_id
from agentflow_eval.run.run_json import read_run_json

__all__ = ["RerunFolder", "prepare_rerun"]


@dataclass(frozen=True)
class RerunFolder:
    """The new run folder and how many trials it will run again (``errored``)."""

    run_dir: Path
    errored: int
    kept: int


def prepare_rerun(source: str | Path) -> RerunFolder:
    """Copy the run at ``source`` into a new folder beside it without its errored
    trials (nor their verdicts). When no trial errored, nothing is written and the
    returned folder is ``source`` itself with ``errored == 0``.

    Raises ``FileNotFoundError`` when ``source`` is not a run folder and ``ValueError``
    when it was not started from parameters (a run started from Python cannot be
    resumed from the command line).
    """
    paths = RunPaths(Path(source).resolve())
    if not paths.meta.is_file():
        raise FileNotFoundError(
            f"{source}: not a run folder (no run.json); pass a folder a run printed as "
            "'results in ...'"
        )
    meta = read_run_json(paths.run_dir)
    if "params" not in meta:
        raise ValueError(
            f"{paths.meta}: this run was started from Python, not from parameters; "
            "re-run it from Python"
        )
    kept_lines: list[bytes] = []
    kept_keys: set[tuple[str, int]] = set()
    errored = 0
    for offset, line in iter_lines_with_offsets(paths.trials):
        trial = parse_record(line, paths.trials, f"byte {offset}")
        if trial.get("error") is not None:
            errored += 1
            continue
        kept_lines.append(line)
        kept_keys.add((trial["case_id"], int(trial["trial_index"])))
    if errored == 0:
        return RerunFolder(paths.run_dir, 0, len(kept_lines))

    started = datetime.now(UTC)
    run_id = new_run_id()
    target = RunPaths(paths.run_dir.parent / f"{started:%Y%m%dT%H%M%SZ}-{run_id}")
    target.run_dir.mkdir(parents=True)
    target.trials.write_bytes(b"".join(kept_lines))
    judged = []
    for offset, line in iter_lines_with_offsets(paths.judged):
        trial = parse_record(line, paths.judged, f"byte {offset}")["trial"]
        if (trial["case_id"], int(trial["trial_index"])) in kept_keys:
            judged.append(line)
    target.judged.write_bytes(b"".join(judged))
    meta.update(run_id=run_id, started_at=started.isoformat(), rerun_of=str(paths.run_dir))
    target.meta.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return RerunFolder(target.run_dir, errored, len(kept_lines))
