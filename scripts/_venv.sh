# Sourced by the quickstart scripts: make .venv (python3 + pip only; AGENTFLOW_PYTHON names
# another interpreter to make it with) and install the
# project into it with the extras in AGENTFLOW_EXTRAS (comma-separated; default: none,
# the package alone). The stamp in .venv records pyproject.toml's hash and the extras
# installed from it: a command whose extras are already there installs nothing, and an
# install keeps the extras an earlier command installed, so the example and the tests
# never reinstall each other's environment.
#
# The install goes through uv (from PyPI, into .venv) where it can be had: it resolves and
# installs the same requirements as pip, several times faster. Where uv cannot be
# installed or fails, pip does the install as before; AGENTFLOW_INSTALLER=pip asks for pip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=${AGENTFLOW_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "${AGENTFLOW_PYTHON:-python3}" -m venv "$VENV"
fi
stamp="$VENV/.agentflow-installed"
project=$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open("pyproject.toml","rb").read()).hexdigest())')
# the extras wanted, and those the stamp says are installed from this pyproject.toml
wanted=$(tr ',' '\n' <<<"${AGENTFLOW_EXTRAS:-}" | sed '/^$/d' | sort -u)
installed=""
[ -f "$stamp" ] && installed=$(tail -n +2 "$stamp" | sed '/^$/d' | sort -u)
missing=$(comm -23 <(echo "$wanted") <(echo "$installed") | sed '/^$/d')

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

if [ ! -f "$stamp" ] || [ "$(head -n1 "$stamp")" != "$project" ] || [ -n "$missing" ]; then
  # what was installed stays installed: the union of the extras asked for and those there
  extras=$(printf '%s\n%s\n' "$wanted" "$installed" | sed '/^$/d' | sort -u | paste -sd, -)
  target="."
  [ -n "$extras" ] && target=".[$extras]"
  echo "installing agentflow-eval${extras:+ with [$extras]} into $VENV" \
    "(once: 2 to 3 minutes for the package alone, a minute more for the tests' extras)..." >&2
  # --compile-bytecode: as pip does, so the first test processes, started together, do
  # not each compile the same modules. --upgrade: a virtualenv made before the pins moved
  # gets what a fresh one gets (and CI tests), the newest each pin allows.
  if ! { _uv && "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" \
           --compile-bytecode --upgrade -e "$target"; }; then
    echo "installing with pip..." >&2
    _pip_install --upgrade --upgrade-strategy eager -e "$target"
  fi
  "$VENV/bin/python" -c "import agentflow_eval, prefect, litellm" >/dev/null
  printf '%s\n%s\n' "$project" "$(tr ',' '\n' <<<"$extras")" > "$stamp"
fi
export PATH="$PWD/$VENV/bin:$PATH"
# Offline by default: litellm's bundled price map, no Prefect telemetry.
export LITELLM_LOCAL_MODEL_COST_MAP=${LITELLM_LOCAL_MODEL_COST_MAP:-True}
export PREFECT_SERVER_ANALYTICS_ENABLED=${PREFECT_SERVER_ANALYTICS_ENABLED:-false}
