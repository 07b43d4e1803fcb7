#!/usr/bin/env bash
# Creates pgvector's extension, `vector`, in Agentry's Postgres database, so that memories and document chunks are
# recalled by vector besides full text. Run it once, as a superuser, after pgvector is installed on the server
# (for example Debian's or PGDG's postgresql-<major>-pgvector package, or pgvector built from source with
# postgresql-server-dev-<major>) and before or after the migrations: the stores find the extension at start.
#
#   deploy/pgvector.sh postgres://postgres@db.example:5432/agentry            # that database
#   deploy/pgvector.sh --template1 postgres://postgres@db.example:5432/agentry  # and template1, for new databases
#
# pgvector is not a trusted extension, so the service's own role cannot create it unless it is a superuser; without
# it the stores keep recalling by full text alone (the conversation service logs which at start). Exits non-zero,
# with the reason, when the server has no pgvector or the role may not create it.
set -euo pipefail

template1=false
if [ "${1:-}" = --template1 ]; then
  template1=true
  shift
fi
url=${1:-${DATABASE_URL:-}}
if [ -z "$url" ]; then
  echo "usage: deploy/pgvector.sh [--template1] postgres://SUPERUSER@HOST:PORT/DATABASE (or DATABASE_URL)" >&2
  exit 2
fi
command -v psql >/dev/null 2>&1 || { echo "psql is needed (Debian: postgresql-client)" >&2; exit 1; }
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
sql() { psql "$1" -qAtX -v ON_ERROR_STOP=1 -c "$2"; }

available=$(sql "$url" "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
if [ -z "$available" ]; then
  echo "pgvector is not installed on this server: install its package for the server's PostgreSQL major version" \
    "($(sql "$url" 'SHOW server_version_num' | cut -c1-2)), then run this again" >&2
  exit 1
fi
databases=("$url")
if $template1; then
  databases+=("$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/template1")))' "$url")")
fi
for database in "${databases[@]}"; do
  sql "$database" "CREATE EXTENSION IF NOT EXISTS vector"
  echo "vector $(sql "$database" "SELECT extversion FROM pg_extension WHERE extname = 'vector'") in $(sql "$database" 'SELECT current_database()')"
done
