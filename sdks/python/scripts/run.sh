#!/usr/bin/env bash
# Runs a tool of the SDK's environment: `run.sh pytest [args]` or `run.sh mypy [args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh
tool=$1
shift
exec .venv/bin/python -m "$tool" "$@"
