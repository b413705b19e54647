"""agentflow-eval: evaluation for LLM agents, run as Prefect flows."""

__version__ = "0.1.0"

import os as _os

# litellm fetches its model price map over the network at import unless told otherwise;
# evaluation must work offline, so use the bundled copy unless the user chose.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
