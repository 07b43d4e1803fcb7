#!/usr/bin/env bash
# Makes sure sdks/python/.venv exists with exactly requirements-dev.txt installed (from PyPI), rebuilding it when
# that file changes. Fails loudly, never skips, when Python 3.10+ or its venv module is missing (the SDK runs on
# 3.9; its tests use OpenAI's SDK, which needs 3.10).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "sdks/python: '$python' not found. Install Python 3.10+ (Debian: apt-get install python3 python3-venv)." >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "sdks/python: Python 3.10+ is required for the tests, found $("$python" --version 2>&1)." >&2
  exit 1
fi
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "sdks/python: $python cannot create virtual environments (Debian: apt-get install python3-venv)." >&2
  exit 1
fi

# typecheck and test may run at once under turbo: one of them builds the environment, the other waits.
exec 9>.venv.lock
flock 9
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/requirements.sha256 2>/dev/null)" != "$want" ]; then
  rm -rf .venv
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements-dev.txt
  echo "$want" >.venv/requirements.sha256
fi
