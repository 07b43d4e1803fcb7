#!/usr/bin/env bash
# Every test of the repository, on a fresh Debian machine with Node 20.19+: installs what the tests need that is
# missing (Debian packages, pnpm, the workspace's packages, the local model), starts PostgreSQL, then runs
# `pnpm test`. Safe to run again on a machine that already has everything. The README's test command; CI runs it too.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v node >/dev/null 2>&1; then
  echo "Node.js 20.19 or newer is required on PATH (https://nodejs.org/en/download); Debian's own nodejs is older." >&2
  exit 1
fi
log "node $(node --version)"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("Node 20.19+ is required"); process.exit(1) }'

apt_packages=()
command -v redis-server >/dev/null 2>&1 || apt_packages+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null || apt_packages+=(postgresql)
# The Python SDK's tests and the schemathesis run (tools/schemathesis, Python 3.11+) each install their packages
# from PyPI into a virtual environment of their own.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || apt_packages+=(python3 python3-venv)
# The Ruby SDK's tests (sdks/ruby) need Ruby 3.1 or later with its bundled minitest: Debian's ruby package.
command -v ruby >/dev/null 2>&1 || apt_packages+=(ruby)
# The web console's browser tests (apps/console/e2e) drive Debian's Chromium through playwright-core: no browser
# download. CHROMIUM_PATH points them at another build.
# Its fonts are only recommended, which this script does not install: named here, so pages lay out as they do for
# people.
[ -x /usr/bin/chromium ] || apt_packages+=(chromium fonts-liberation)
if [ ${#apt_packages[@]} -gt 0 ]; then
  log "apt-get install ${apt_packages[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null
fi

if ! command -v pnpm >/dev/null 2>&1; then
  log "installing pnpm"
  npm install -g pnpm@10.34.8 >/dev/null
fi

# better-sqlite3 compiles from source when its prebuilt binary cannot be downloaded; point node-gyp at the
# headers of the running Node so it needs no download either.
if [ -f /usr/include/node/node.h ]; then
  export npm_config_nodedir=/usr
fi

log "pnpm install"
pnpm install --frozen-lockfile

# PostgreSQL: the distribution's cluster, started once for the run. The Postgres suites create and drop their own
# databases on it through TEST_DATABASE_URL, as a role that may create databases and roles and nothing more.
pg_version=$(compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" | cut -d/ -f5 | sort -V | tail -n1)
pg_cluster() { pg_lsclusters -h | awk -v v="$pg_version" '$1 == v && $2 == "main"'; }
[ -n "$(pg_cluster)" ] || as_root pg_createcluster "$pg_version" main >/dev/null
if [ "$(pg_cluster | awk '{print $4}')" != online ]; then
  log "starting PostgreSQL $pg_version"
  as_root pg_ctlcluster "$pg_version" main start
fi
pg_port=$(pg_cluster | awk '{print $3}')
pg_psql() { as_root runuser -u postgres -- psql -p "$pg_port" -qAtX -v ON_ERROR_STOP=1 "$@"; }
# The suites run in parallel, each with pools of its own; the default of 100 connections is too tight.
if [ "$(pg_psql -c 'SHOW max_connections')" -lt 300 ]; then
  pg_psql -c 'ALTER SYSTEM SET max_connections = 300'
  as_root pg_ctlcluster "$pg_version" main restart
fi
# A server started before its packages were upgraded cannot load the upgraded libraries (plpgsql among them, so
# every DO block fails): restarted onto the installed binaries.
pg_installed=$("/usr/lib/postgresql/$pg_version/bin/postgres" --version | awk '{print $3}')
pg_running=$(pg_psql -c 'SHOW server_version' | awk '{print $1}')
if [ "$pg_installed" != "$pg_running" ]; then
  log "restarting PostgreSQL $pg_running onto the installed $pg_installed"
  as_root pg_ctlcluster "$pg_version" main restart
fi
# pgvector: the memory and document stores rank by vector where the database has its extension, `vector`, and by
# full text alone elsewhere. It is not a trusted extension, so the tests' role cannot create it: the superuser
# creates it here in template1 (which the tests copy for their pgvector databases) and in postgres, as
# deploy/pgvector.sh does for an operator. Without pgvector on the server, only the full-text paths are tested.
if [ -n "$(pg_psql -c "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")" ]; then
  for database in template1 postgres; do
    pg_psql -d "$database" -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS vector'
  done
  log "pgvector $(pg_psql -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'") in template1 and postgres"
else
  log "WARNING: pgvector is not installed for PostgreSQL $pg_version: the vector paths of memories and documents are not tested (see deploy/pgvector.sh)"
fi
pg_psql <<'SQL'
SELECT 'CREATE ROLE agentry_ci' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentry_ci') \gexec
ALTER ROLE agentry_ci LOGIN CREATEDB CREATEROLE PASSWORD 'agentry_ci';
SQL
export TEST_DATABASE_URL="postgres://agentry_ci:agentry_ci@127.0.0.1:${pg_port}/postgres"
log "PostgreSQL $pg_version on port $pg_port for the tests"

# The local model (about 94 MiB) in the per-machine cache the tests read: fetched once, then only checked.
log "pnpm models:pull"
pnpm models:pull --dir "$HOME/.cache/agentry/models"

# deploy/: the Dockerfile, the compose stack and the Kubernetes manifests checked with real tools from the
# package registries, and the images' probe commands run against the services. No image is built: no engine here.
log "deploy/ validation"
bash deploy/validate.sh

# The Go SDK's tests (sdks/go) need Go 1.24 or later: this kind of machine has it in /usr/local/go, while Debian's
# golang-go (1.19) is too old to build the module. Without one, the official toolchain comes from the Go module
# proxy, as `go` itself fetches a newer toolchain (GOTOOLCHAIN), into a per-machine cache.
go_ok() { go env GOVERSION 2>/dev/null | grep -Eq '^go1\.(2[4-9]|[3-9][0-9])'; }
if ! go_ok && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
go_cache="$HOME/.cache/agentry/go"
if ! go_ok && [ -x "$go_cache/go/bin/go" ]; then
  export PATH="$go_cache/go/bin:$PATH"
fi
if ! go_ok; then
  go_toolchain=go1.24.6
  log "fetching the Go toolchain $go_toolchain"
  mkdir -p "$go_cache"
  python3 - "$go_toolchain" "$go_cache" <<'PY'
import io, os, stat, sys, urllib.request, zipfile
version, dest = sys.argv[1], sys.argv[2]
proxy = os.environ.get("GOPROXY", "https://proxy.golang.org").split(",")[0].split("|")[0]
url = f"{proxy}/golang.org/toolchain/@v/v0.0.1-{version}.linux-amd64.zip"
data = urllib.request.urlopen(url, timeout=300).read()
prefix = f"golang.org/toolchain@v0.0.1-{version}.linux-amd64/"
with zipfile.ZipFile(io.BytesIO(data)) as archive:
    for info in archive.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        target = os.path.join(dest, "go", info.filename[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
        mode = info.external_attr >> 16
        if mode & stat.S_IXUSR:
            os.chmod(target, 0o755)
PY
  export PATH="$go_cache/go/bin:$PATH"
fi
go_version=$(go env GOVERSION 2>/dev/null || true)
if ! go_ok; then
  echo "sdks/go needs Go 1.24 or later on PATH; found '${go_version:-no go}'" >&2
  exit 1
fi
log "$go_version for sdks/go"

log "pnpm test"
pnpm test
