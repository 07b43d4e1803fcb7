#!/bin/sh
# Fails loudly, rather than skipping the Ruby SDK's tests, when this machine has no Ruby 3.1+.
if ! command -v ruby >/dev/null 2>&1; then
  echo "The Ruby SDK's tests need Ruby 3.1 or later: apt-get install ruby (bash scripts/test.sh installs it)." >&2
  exit 1
fi
ruby -e 'exit(Gem::Version.new(RUBY_VERSION) >= Gem::Version.new("3.1") ? 0 : 1)' || {
  echo "The Ruby SDK needs Ruby 3.1 or later; this is $(ruby -v)." >&2
  exit 1
}
