#!/usr/bin/env bash
# Quickstart 2: run the test suite. Its tiers (README, Development):
#   core        tests/unit        the library alone, in parallel (pytest-xdist)
#   frameworks  tests/frameworks  each framework's adapter on real agents of that framework
#   flows       tests/flows       flows and tasks against one Prefect test harness; SeaweedFS
#   end-to-end  tests/e2e         real Prefect servers with process workers, SeaweedFS,
#                                 headless Chromium (where available), a fresh pip install;
#                                 three modules at a time
# and the type check, tests/types (mypy, strict, on the package as it installs).
#
# Core runs first, alone in the foreground, and the suite stops there if it fails. Then
# the type check, frameworks and flows run in the background beside end-to-end, one after
# another, each in one process: they have the CPU that end-to-end's tests leave while
# they wait on servers and workers, and one after another they spread that work over
# more of end-to-end's waits. The suite fails if any tier or the type check failed; the
# output of a background run is shown when it ends.
#
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
python -c 'import platform; from importlib.metadata import version as v
pins = ", ".join(f"{n} {v(n)}" for n in ("prefect", "fastapi", "sqlalchemy"))
print("== testing with", pins, "on Python", platform.python_version())' >&2

logs=$(mktemp -d)
started=$SECONDS
failed=()

tier() {  # a tier in the foreground
  local name=$1
  shift
  echo "== $name: pytest $(printf "%q " "$@")" >&2
  local began=$SECONDS
  local status=0
  python -m pytest "$@" || status=$?
  if [ "$status" = 5 ]; then  # no test of this tier was selected (-k, -m): not a failure
    status=0
  fi
  echo "== $name: exit $status after $((SECONDS - began)) s" >&2
  return "$status"
}

# A tier in the background, its output in $logs/NAME.log until it ends; with
# `--after OTHER` first, it starts once the background tier OTHER has ended. Ctrl-C
# reaches it as it reaches the foreground (the subshell gives pytest back the SIGINT a
# background job would ignore), so it stops its servers before it exits.
declare -A pids began
background() {
  local after=
  if [ "$1" = --after ]; then
    after=${pids[$2]}
    shift 2
  fi
  local name=$1
  shift
  echo "== $name: pytest $(printf "%q " "$@")(in the background${after:+, after the one before})" >&2
  began[$name]=$SECONDS
  (
    trap - INT
    while [ -n "$after" ] && kill -0 "$after" 2>/dev/null; do sleep 1; done
    exec python -m pytest "$@"
  ) >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
}

finish() {  # wait for a background tier, show its output and record its result
  local name=$1
  local status=0
  wait "${pids[$name]}" || status=$?
  if [ "$status" = 5 ]; then
    status=0
  fi
  cat "$logs/$name.log"  # pytest's last line says how long the tier took
  echo "== $name: exit $status, ended by $((SECONDS - ${began[$name]})) s after it was queued" >&2
  if [ "$status" != 0 ]; then
    failed+=("$name")
  fi
}

if ! tier core tests/unit -n auto --dist worksteal "$@"; then
  rm -rf "$logs"
  exit 1
fi
background types tests/types "$@"
background --after types frameworks tests/frameworks "$@"
background --after frameworks flows tests/flows "$@"
tier end-to-end tests/e2e -n 3 --dist loadfile --durations=15 "$@" || failed+=(end-to-end)
finish types
finish frameworks
finish flows
rm -rf "$logs"
echo "== all tiers: $((SECONDS - started)) s; failed: ${failed[*]:-none}" >&2
[ ${#failed[@]} = 0 ]
