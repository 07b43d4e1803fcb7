#!/usr/bin/env bash
# Validates deploy/ with the real tools, installed from package registries only (PyPI, the Go module proxy,
# Debian) into a cache outside the repository, so a second run needs no network:
#
#   hadolint             the Dockerfile (lint)
#   kustomize            renders deploy/k8s
#   kubernetes-validate  the rendered manifests and the Secret example, strictly, against the schemas of the
#                        oldest and the newest Kubernetes versions it ships
#   composecheck         deploy/compose.yaml through compose-go, Docker Compose's own loader (schema,
#                        interpolation, consistency); warnings count as errors
#   caddy                validates and format-checks the load balancer's Caddyfile
#   policy.py            cross-references and invariants no schema covers (selectors, ports, probes, graceful
#                        shutdown, hardening, Secret keys, image targets, variables the services read)
#   probes               starts the services from this checkout and runs the exact probe commands of the
#                        images against them (HTTP/1.1 and h2c), then stops each with SIGTERM
#
# No image is built and nothing is started in Docker or Kubernetes: this machine has no container engine.
# Needs the workspace installed (pnpm install) for the probe check. Exits 1 when any check fails.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

KUSTOMIZE_VERSION=v5.8.2
tools=${AGENTRY_DEPLOY_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/agentry-deploy-tools}
mkdir -p "$tools/bin"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
check() { # check NAME COMMAND...: runs one check, prints its outcome and, on failure, its output
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then
    passed=$((passed + 1))
    printf 'ok   %s\n' "$name"
  else
    failed=$((failed + 1))
    printf 'FAIL %s\n' "$name"
    sed 's/^/       /' "$work/out"
  fi
}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# ---------------------------------------------------------------------------------------------------------------
# Tools
install_tools() {
  local requirements=deploy/validate/requirements.txt
  local stamp
  stamp=$(sha256sum "$requirements" | cut -c1-12)
  if [ ! -x "$tools/venv-$stamp/bin/kubernetes-validate" ]; then
    echo "== installing $(tr '\n' ' ' <"$requirements")from PyPI"
    python3 -m venv "$tools/venv-$stamp" && "$tools/venv-$stamp/bin/pip" install -q -r "$requirements" || return 1
  fi
  venv=$tools/venv-$stamp

  # Built with this machine's Go from the module proxy; never a toolchain download.
  export GOTOOLCHAIN=local GOFLAGS="-buildvcs=false -mod=readonly"
  if [ ! -x "$tools/bin/kustomize-$KUSTOMIZE_VERSION" ]; then
    echo "== building kustomize $KUSTOMIZE_VERSION from the Go module proxy"
    GOBIN="$tools/go-bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" &&
      mv "$tools/go-bin/kustomize" "$tools/bin/kustomize-$KUSTOMIZE_VERSION" || return 1
  fi
  kustomize=$tools/bin/kustomize-$KUSTOMIZE_VERSION

  stamp=$(cat deploy/validate/composecheck/{go.mod,go.sum,main.go} | sha256sum | cut -c1-12)
  if [ ! -x "$tools/bin/composecheck-$stamp" ]; then
    echo "== building composecheck (compose-go) from the Go module proxy"
    (cd deploy/validate/composecheck && go build -o "$tools/bin/composecheck-$stamp" .) || return 1
  fi
  composecheck=$tools/bin/composecheck-$stamp

  # Debian's caddy, unpacked rather than installed: the package would start a server.
  if [ ! -x "$tools/caddy/usr/bin/caddy" ]; then
    echo "== fetching caddy from Debian"
    (cd "$work" && { apt-get download caddy 2>/dev/null || { as_root apt-get update -qq && apt-get download caddy; }; } &&
      dpkg-deb -x caddy_*.deb "$tools/caddy") || return 1
  fi
  caddy=$tools/caddy/usr/bin/caddy
}
if ! install_tools; then
  echo "FAIL installing the validation tools"
  echo "deploy validation: 0 passed, 1 failed"
  exit 1
fi

# ---------------------------------------------------------------------------------------------------------------
# Static checks
check "hadolint: deploy/docker/Dockerfile" "$venv/bin/hadolint" --no-color deploy/docker/Dockerfile

check "kustomize: build deploy/k8s" sh -c '"$1" build deploy/k8s >"$2/k8s.yaml"' _ "$kustomize" "$work"
for version in 1.29.0 1.37.0; do
  check "kubernetes-validate --strict: Kubernetes $version" \
    "$venv/bin/kubernetes-validate" --quiet --strict -k "$version" "$work/k8s.yaml" deploy/k8s/secret.example.yaml
done

check "compose: deploy/compose.yaml with .env.example" \
  sh -c '"$1" -env-file deploy/.env.example deploy/compose.yaml >"$2/compose.yaml"' _ "$composecheck" "$work"
# The passwords are required: without them compose must refuse to start anything.
refuses_without_passwords() {
  local out
  if out=$(env -u POSTGRES_PASSWORD -u REDIS_PASSWORD "$composecheck" -env-file /dev/null deploy/compose.yaml 2>&1); then
    echo "loaded without POSTGRES_PASSWORD and REDIS_PASSWORD"
    return 1
  fi
  grep -q "set POSTGRES_PASSWORD in deploy/.env" <<<"$out" || { echo "$out"; return 1; }
}
check "compose: refuses to run without the passwords" refuses_without_passwords

check "caddy: validate deploy/caddy/Caddyfile" "$caddy" validate --config deploy/caddy/Caddyfile --adapter caddyfile
check "caddy: deploy/caddy/Caddyfile is formatted" sh -c '"$1" fmt deploy/caddy/Caddyfile | diff -u deploy/caddy/Caddyfile -' _ "$caddy"

if [ -s "$work/k8s.yaml" ] && [ -s "$work/compose.yaml" ]; then
  "$venv/bin/python" deploy/validate/policy.py --k8s "$work/k8s.yaml" --secret deploy/k8s/secret.example.yaml \
    --compose "$work/compose.yaml" --dockerfile deploy/docker/Dockerfile --root "$root" >"$work/policy" 2>&1
  while IFS= read -r line; do
    case $line in
      "ok   "*) passed=$((passed + 1)) ;;
      "FAIL "*) failed=$((failed + 1)) ;;
    esac
    printf '%s\n' "$line"
  done <"$work/policy"
  grep -qE '^(ok  |FAIL) ' "$work/policy" || { failed=$((failed + 1)); cat "$work/policy"; }
else
  failed=$((failed + 1))
  echo "FAIL policy: nothing rendered to check"
fi

# ---------------------------------------------------------------------------------------------------------------
# The probe commands of the images, against the services started from this checkout on loopback.
probe() { node deploy/docker/healthcheck.mjs "$@"; }
free_port() { node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
until_probe() { # until_probe URL: waits up to 90 s for the probe to pass
  for _ in $(seq 1 90); do probe "$1" 1000 2>/dev/null && return 0; sleep 1; done
  probe "$1" 1000
}
start() { # start NAME[:LOG] VAR=VALUE...: a service as the image runs it, JSON logs in $work/LOG.log (LOG: NAME)
  local name=${1%%:*} log=${1#*:}
  shift
  env "$@" LOG_FORMAT=json DATA_DIR="$work/data" node --import tsx "services/$name/src/main.ts" >"$work/$log.log" 2>&1 &
  pids+=($!)
  eval "${log}_pid=$!"
}
drain_behind_load_balancer() { # LB_PORT GATEWAY_PID: 8 s of requests through the balancer, the gateway stopped after 2 s
  (sleep 2 && kill -TERM "$2") &
  node -e '
    const http = require("node:http");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const until = Date.now() + 8000;
    const seen = {};
    const once = () => new Promise((done) => {
      http.get({ host: "127.0.0.1", port: Number(process.argv[1]), path: "/v1/agents", agent }, (res) => {
        res.resume();
        res.on("end", () => done(res.statusCode));
      }).on("error", (error) => done(error.code));
    });
    const worker = async () => { while (Date.now() < until) { const s = await once(); seen[s] = (seen[s] ?? 0) + 1; } };
    Promise.all(Array.from({ length: 8 }, worker)).then(() => {
      console.log(JSON.stringify(seen));
      // Without a key every request that reaches a gateway is answered 401; anything else came from the balancer.
      process.exit(Object.keys(seen).join() === "401" && seen[401] > 100 ? 0 : 1);
    });
  ' "$1" || return 1
  # The stopped gateway took its share before it drained, and exited cleanly.
  grep -q '"path":"/v1/agents"' "$work/gateway1.log" || { echo "gateway 1 served no request"; return 1; }
  wait "$2"
}
stops_cleanly() { # stops_cleanly PID: SIGTERM, then the exit code must be 0 within 30 s
  kill -TERM "$1"
  for _ in $(seq 1 60); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
  wait "$1"
}

if [ ! -d node_modules ] || [ ! -d packages/proto/src/gen ]; then
  failed=$((failed + 1))
  echo "FAIL probes: the workspace is not installed (run pnpm install first)"
else
  registry_port=$(free_port) conversation_port=$(free_port) gateway1_port=$(free_port) gateway2_port=$(free_port)
  webhooks_port=$(free_port) lb_port=$(free_port)
  start registry REGISTRY_HOST=127.0.0.1 REGISTRY_PORT="$registry_port" CONVERSATION_URL="http://127.0.0.1:$conversation_port" \
    WEBHOOKS_URL="http://127.0.0.1:$webhooks_port" SECRETS_KEY="$(head -c 32 /dev/urandom | base64)"
  start conversation HOST=127.0.0.1 CONVERSATION_PORT="$conversation_port" WEBHOOKS_URL="http://127.0.0.1:$webhooks_port" \
    REGISTRY_URL="http://127.0.0.1:$registry_port"
  start webhooks HOST=127.0.0.1 WEBHOOKS_PORT="$webhooks_port"
  for n in 1 2; do
    port_var=gateway${n}_port
    start "gateway:gateway$n" HOST=127.0.0.1 PORT="${!port_var}" REGISTRY_URL="http://127.0.0.1:$registry_port" \
      CONVERSATION_URL="http://127.0.0.1:$conversation_port" WEBHOOKS_URL="http://127.0.0.1:$webhooks_port"
  done
  # The compose load balancer's own Caddyfile, pointed at the loopback gateways, on loopback, without admin port.
  sed -e "s/gateway-1:8080/127.0.0.1:$gateway1_port/; s/gateway-2:8080/127.0.0.1:$gateway2_port/" \
    -e "s/^:8080 {/:$lb_port {\n\tbind 127.0.0.1/" -e 's/^\tauto_https off$/\tauto_https off\n\tadmin off/' \
    deploy/caddy/Caddyfile >"$work/Caddyfile"
  "$caddy" run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
  pids+=($!)

  check "probes: registry ready over h2c" until_probe "h2c://127.0.0.1:$registry_port/readyz"
  check "probes: conversation ready over h2c" until_probe "h2c://127.0.0.1:$conversation_port/readyz"
  check "probes: webhooks ready over h2c" until_probe "h2c://127.0.0.1:$webhooks_port/readyz"
  check "probes: gateway 1 ready over HTTP/1.1" until_probe "http://127.0.0.1:$gateway1_port/readyz"
  check "probes: gateway 2 ready over HTTP/1.1" until_probe "http://127.0.0.1:$gateway2_port/readyz"
  check "probes: registry, conversation and webhooks alive over h2c" sh -c \
    'for port in "$@"; do node deploy/docker/healthcheck.mjs "h2c://127.0.0.1:$port/healthz" || exit 1; done' \
    _ "$registry_port" "$conversation_port" "$webhooks_port"
  # The h2c services cannot be probed over HTTP/1.1: the reason Kubernetes uses the exec probe for them.
  check "probes: an HTTP/1.1 probe of an h2c service fails" sh -c '! node deploy/docker/healthcheck.mjs "$1" 2000' \
    _ "http://127.0.0.1:$registry_port/healthz"
  check "load balancer: every request reaches a gateway while one drains on SIGTERM" \
    drain_behind_load_balancer "$lb_port" "$gateway1_pid"
  check "probes: registry exits 0 on SIGTERM" stops_cleanly "$registry_pid"
  # A dependency down is reported, not a reason to leave rotation: the gateway answers the documented 503 itself.
  check "probes: gateway still ready, reporting the registry down, once the registry is gone" sh -c \
    'node deploy/docker/healthcheck.mjs "$1" 5000 && node -e "fetch(process.argv[1]).then((r) => r.json()).then((b) => process.exit(b.dependencies.registry === \"down\" ? 0 : 1))" "$1"' \
    _ "http://127.0.0.1:$gateway2_port/readyz"
  check "probes: gateway exits 0 on SIGTERM" stops_cleanly "$gateway2_pid"
  check "probes: conversation exits 0 on SIGTERM" stops_cleanly "$conversation_pid"
  check "probes: webhooks exits 0 on SIGTERM" stops_cleanly "$webhooks_pid"
fi

echo "deploy validation: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
