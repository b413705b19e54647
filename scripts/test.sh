#!/usr/bin/env bash
# Quickstart 2: run the test suite (unit, flow and end-to-end tests with a real Prefect
# server, SeaweedFS and headless Chromium where available). Extra arguments go to pytest.
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh"
if ! command -v chromium >/dev/null 2>&1; then
  echo "note: chromium not found; the browser test will be skipped (CI installs it)." >&2
fi
exec python -m pytest "$@"
