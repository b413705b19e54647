# Sourced by the quickstart scripts: make .venv (python3 + pip only) and install the
# project into it with the extras in AGENTFLOW_EXTRAS (default: test), again only when
# pyproject.toml or the extras changed.
#
# The install goes through uv (from PyPI, into .venv) where it can be had: it resolves and
# installs the same requirements as pip, several times faster. Where uv cannot be
# installed or fails, pip does the install as before; AGENTFLOW_INSTALLER=pip asks for pip.
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

_pip_install() {
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" 2>&1 \
    | grep -v -E "^WARNING: Location .* is ignored" >&2 || true
}

_uv() {
  # uv in .venv, installed from its wheel (never built from source: that needs Rust)
  if [ "${AGENTFLOW_INSTALLER:-uv}" = pip ]; then
    return 1
  fi
  if [ ! -x "$VENV/bin/uv" ]; then
    _pip_install --only-binary uv uv
  fi
  [ -x "$VENV/bin/uv" ]
}

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # --compile-bytecode: as pip does, so the first test processes, started together, do
  # not each compile the same modules. --upgrade: a virtualenv made before the pins moved
  # gets what a fresh one gets (and CI tests), the newest each pin allows.
  if ! { _uv && "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" \
           --compile-bytecode --upgrade -e ".[$EXTRAS]"; }; then
    echo "installing with pip..." >&2
    _pip_install --upgrade --upgrade-strategy eager -e ".[$EXTRAS]"
  fi
  "$VENV/bin/python" -c "import agentflow_eval, prefect, litellm" >/dev/null
  echo "$want" > "$stamp"
fi
export PATH="$PWD/$VENV/bin:$PATH"
# Offline by default: litellm's bundled price map, no Prefect telemetry.
export LITELLM_LOCAL_MODEL_COST_MAP=${LITELLM_LOCAL_MODEL_COST_MAP:-True}
export PREFECT_SERVER_ANALYTICS_ENABLED=${PREFECT_SERVER_ANALYTICS_ENABLED:-false}
