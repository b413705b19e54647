#!/usr/bin/env bash
# Quickstart 1: evaluate the example weather agent end to end, offline, and write the report.
# Extra arguments go to `agentflow-eval run` (e.g. --runs 10, --model openai/gpt-4o-mini).
# The package alone: the test command installs the test tooling and the frameworks.
export AGENTFLOW_EXTRAS=${AGENTFLOW_EXTRAS-}
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
exec agentflow-eval run examples.weather.agent:agent examples/weather/weather.evalset.json \
  --config examples/weather/eval_config.json --output eval-results "$@"
