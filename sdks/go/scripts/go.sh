#!/bin/sh
# The Go SDK's workspace tasks: `lint` (go vet, gofmt) and `test` (go test, the conformance scenario included).
# Fails, never skips, when there is no Go toolchain.
set -eu
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "sdks/go: no Go toolchain on PATH; the Go SDK needs Go 1.24 or later (bash scripts/test.sh fetches one)" >&2
  exit 1
fi
case "${1:-}" in
  lint)
    go vet ./...
    unformatted=$(gofmt -l .)
    if [ -n "$unformatted" ]; then
      echo "sdks/go: not gofmt-formatted (run gofmt -w on them; *_gen.go: pnpm --filter @agentry/sdk-generator generate):" >&2
      echo "$unformatted" >&2
      exit 1
    fi
    ;;
  test)
    go test -count=1 ./...
    ;;
  *)
    echo "usage: scripts/go.sh lint|test" >&2
    exit 2
    ;;
esac
