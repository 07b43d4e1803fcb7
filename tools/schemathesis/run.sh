#!/usr/bin/env bash
# Runs schemathesis, with every check, against a live service and the OpenAPI document it serves, and fails on
# anything it finds. The service is the SDK conformance launcher's (the real gateway with its embedded services
# on a temporary DATA_DIR, fake OpenAI and Anthropic servers speaking their wire protocols, the local model off);
# the account and key come from the admin CLI, as an operator makes them. SCHEMATHESIS_SEED replays a run.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)

# --- schemathesis in an environment of its own, rebuilt when requirements.txt changes ------------------------
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "tools/schemathesis: '$python' not found. Install Python 3.11+ (Debian: apt-get install python3 python3-venv)." >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "tools/schemathesis: schemathesis needs Python 3.11+, found $("$python" --version 2>&1)." >&2
  exit 1
fi
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  echo "tools/schemathesis: $python cannot create virtual environments (Debian: apt-get install python3-venv)." >&2
  exit 1
fi
(
  flock 9
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ ! -x .venv/bin/schemathesis ] || [ "$(cat .venv/requirements.sha256 2>/dev/null)" != "$want" ]; then
    rm -rf .venv
    "$python" -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt
    echo "$want" >.venv/requirements.sha256
  fi
) 9>.venv.lock

# The hooks' own tests first: the run relies on them to keep the rules the schemas cannot state.
.venv/bin/python -m pytest -q -p no:cacheprovider test_hooks.py

# --- the service --------------------------------------------------------------------------------------------
log=$(mktemp)
# The launcher runs until its standard input closes: the coprocess's input is this script's to close.
coproc LAUNCHER { exec node --import tsx "$root/tools/conformance/serve.ts" --providers openai,anthropic 2>"$log"; }
launcher_pid=$LAUNCHER_PID
stop() {
  status=$?
  exec {LAUNCHER[1]}>&- 2>/dev/null || true
  # Normally it has exited on its own by now; it is this script's child, stopped by its own pid.
  for _ in $(seq 50); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 0.1; done
  kill "$launcher_pid" 2>/dev/null || true
  rm -f "$log"
  exit "$status"
}
trap stop EXIT
if ! read -r -t 120 info <&"${LAUNCHER[0]}"; then
  echo "tools/schemathesis: the service did not start:" >&2
  cat "$log" >&2
  exit 1
fi
field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$info" "$1"; }
base_url=$(field baseURL)
data_dir=$(field dataDir)
# Where hooks.py points the webhook URLs the schema accepts: the launcher's sink, which takes every delivery.
export AGENTRY_WEBHOOK_SINK="$(field controlURL)/webhooks/schemathesis"

# --- an account whose limits never get in the way, and a key with every scope ------------------------------
limits=()
for name in requestsPerMinute createPerMinute listPerMinute getPerMinute updatePerMinute deletePerMinute \
  messagesPerMinute maxAgents; do
  limits+=(--limit "$name=1000000")
done
DATA_DIR=$data_dir pnpm -s -w cli accounts create schemathesis --tier enterprise "${limits[@]}" \
  --limit concurrentMessages=1000 >/dev/null
key=$(DATA_DIR=$data_dir pnpm -s -w cli keys create --account schemathesis --name schemathesis | tail -1)

# --- the run ------------------------------------------------------------------------------------------------
seed=()
if [ -n "${SCHEMATHESIS_SEED:-}" ]; then seed=(--seed "$SCHEMATHESIS_SEED"); fi
started=$(date +%s)
set +e
.venv/bin/schemathesis --config-file schemathesis.toml run "$base_url/openapi.json" \
  --checks all --header "Authorization: Bearer $key" --no-color "${seed[@]}"
status=$?
set -e
echo "tools/schemathesis: schemathesis took $(($(date +%s) - started)) s"
exit "$status"
