#!/usr/bin/env bash
# Quickstart 2: run the test suite, one tier after another, fastest first, stopping at the
# first tier that fails:
#   core        tests/unit   the library alone, in parallel (pytest-xdist)
#   frameworks  tests/frameworks  each framework's adapter on real agents of that framework
#   flows       tests/flows  flows and tasks against one Prefect test harness
#   end-to-end  tests/e2e    one real Prefect server with process workers, one SeaweedFS,
#                            headless Chromium (where available), a fresh pip install
# Extra arguments go to pytest in every tier (bash scripts/test.sh -x -k judge). Arguments
# that name test paths run pytest on those alone (bash scripts/test.sh tests/unit/llm -q).
# The agent frameworks too: their adapters are tested on the real libraries.
export AGENTFLOW_EXTRAS=${AGENTFLOW_EXTRAS:-test,frameworks}
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"

for arg in "$@"; do
  path=${arg%%::*}
  if [[ "$arg" != -* && -e "$path" && "$(realpath "$path")/" == "$PWD/tests/"* ]]; then
    exec python -m pytest "$@"  # a test file or folder named: pytest on it alone
  fi
done

if ! command -v chromium >/dev/null 2>&1; then
  echo "note: chromium not found; the browser tests will be skipped (CI installs it)." >&2
fi

# what the tiers test against: the newest the pins in pyproject.toml allow
python -c 'from importlib.metadata import version as v
print("== testing with", ", ".join(f"{n} {v(n)}" for n in ("prefect", "fastapi", "sqlalchemy")))' >&2

tier() {
  local name=$1
  shift
  echo "== $name tier: pytest $(printf "%q " "$@")" >&2
  local started=$SECONDS
  local status=0
  python -m pytest "$@" || status=$?
  echo "== $name tier: exit $status after $((SECONDS - started)) s" >&2
  if [ "$status" = 5 ]; then  # no test of this tier was selected (-k, -m): not a failure
    return 0
  fi
  return "$status"
}

tier core tests/unit -n auto --dist worksteal "$@"
tier frameworks tests/frameworks -n auto --dist worksteal "$@"
tier flows tests/flows "$@"
tier end-to-end tests/e2e --durations=15 "$@"
