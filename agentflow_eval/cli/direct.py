"""``agentflow-eval run --no-prefect`` (or ``AGENTFLOW_EVAL_NO_PREFECT=1``): the run
request carried out in this process, without Prefect.

The same one call (:func:`~agentflow_eval.pipeline.execute.execute`) with the direct
runtime, as ``AgentEvaluator`` runs it: the same plan, stages, run folder, reports, gates,
publishing, resume and Ctrl-C; what only Prefect has is left out: no flow run, no task
runs, artifacts or events, no temporary API server to boot. Prefect is not imported on
this path at all, which is what makes it a loop of seconds. Judge replies go to the same
local cache the flow's run uses by default (Prefect's local result storage folder), so
switching between the two paths never pays for a judge call twice.

A run that needs Prefect (provider keys from Secret blocks, S3 credentials from a Secret
block, a pool's shared storage, shards) is refused with one line by the direct runtime's
check: its ``--resume`` runs without ``--no-prefect``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path

from agentflow_eval.criteria.judges.cache import JudgeCache, StoreJudgeCache
from agentflow_eval.storage.local import LocalStore

__all__ = ["local_judge_cache", "local_result_storage", "show_logs"]


def local_result_storage(environ: Mapping[str, str]) -> Path:
    """The folder Prefect keeps a local flow run's results in, where the flow's judge
    cache lives: ``PREFECT_RESULTS_LOCAL_STORAGE_PATH`` (or its older name
    ``PREFECT_LOCAL_STORAGE_PATH``), else ``$PREFECT_HOME/storage``, else
    ``~/.prefect/storage`` — read from the environment, so a value set only in a Prefect
    profile is not seen here."""
    for name in ("PREFECT_RESULTS_LOCAL_STORAGE_PATH", "PREFECT_LOCAL_STORAGE_PATH"):
        if environ.get(name):
            return Path(environ[name]).expanduser()
    home = environ.get("PREFECT_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".prefect") / "storage"


def local_judge_cache(environ: Mapping[str, str]) -> JudgeCache:
    """The judge cache a local flow run uses, as a folder (a config that turns caching
    off is not asked: the runtime asks no cache then)."""
    return StoreJudgeCache(LocalStore(local_result_storage(environ)))


def show_logs(verbose: bool) -> None:
    """This process's warnings (with ``verbose``, agentflow-eval's info lines too) on
    stderr, as the flow path's console shows Prefect's."""
    if not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            logging.Formatter("%(asctime)s | %(levelname)-7s | %(name)s - %(message)s")
        )
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
    if verbose:
        logging.getLogger("agentflow_eval").setLevel(logging.INFO)
