#!/usr/bin/env bash
# The RPC contracts may grow, but never break what a caller built against the first released ones relies on
# (buf's FILE rules): checked against proto/ as released in that commit.
set -euo pipefail
cd "$(dirname "$0")/.."
released=172c43c19aff27bcf7657007cd3f0b5b373fb112
git_dir=$(git rev-parse --path-format=absolute --git-common-dir)
exec buf breaking ../../proto --against "${git_dir}#ref=${released},subdir=proto"
