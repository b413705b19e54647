"""Test-wide environment: offline litellm, an isolated Prefect home, no analytics."""

from __future__ import annotations

import os
import tempfile

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="agentflow-eval-prefect-"))
os.environ.setdefault("PREFECT_LOGGING_TO_API_ENABLED", "false")
