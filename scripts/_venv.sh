# Sourced by the quickstart scripts: make .venv (python3 + pip only) and install the
# project into it with the extras in AGENTFLOW_EXTRAS (default: test), again only when
# pyproject.toml or the extras changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=${AGENTFLOW_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  echo "setting up $VENV (first run takes a minute or two)..." >&2
  python3 -m venv "$VENV"
fi
stamp="$VENV/.agentflow-installed"
EXTRAS=${AGENTFLOW_EXTRAS:-test}
want=$( (cat pyproject.toml; echo "extras: $EXTRAS") | python3 -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # --upgrade, eager: a virtualenv made before the pins moved gets what a fresh one gets
  # (and CI tests), the newest each pin allows, not what it happened to hold.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --upgrade --upgrade-strategy eager -e ".[$EXTRAS]" 2>&1 \
    | grep -v -E "^WARNING: Location .* is ignored" >&2 || true
  "$VENV/bin/python" -c "import agentflow_eval, prefect, litellm" >/dev/null
  echo "$want" > "$stamp"
fi
export PATH="$PWD/$VENV/bin:$PATH"
# Offline by default: litellm's bundled price map, no Prefect telemetry.
export LITELLM_LOCAL_MODEL_COST_MAP=${LITELLM_LOCAL_MODEL_COST_MAP:-True}
export PREFECT_SERVER_ANALYTICS_ENABLED=${PREFECT_SERVER_ANALYTICS_ENABLED:-false}
