#!/usr/bin/env bash
# CI as a slower, busier machine sees it (issue 36): a fresh clone's `CI=true bash .ci/run`, with a
# second whole suite (`npm test` of another fresh clone) running beside it, again and again, until
# the first ends. Usage: scripts/ci-under-load.sh <work dir> [<repo, default: this checkout>]
# Prints the first's last line (rc and seconds); logs are in <work dir>/{ci,beside.N}.log.
set -u
work=${1:?usage: scripts/ci-under-load.sh <work dir> [<repo>]}
repo=${2:-$(cd "$(dirname "$0")/.." && pwd)}
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/ci"
git clone -q "$repo" "$work/beside"
(cd "$work/beside" && npm ci --no-audit --no-fund >/dev/null 2>&1)
start=$(date +%s)
(cd "$work/ci" && CI=true bash .ci/run >"$work/ci.log" 2>&1; echo "rc=$? secs=$(($(date +%s) - start))" >>"$work/ci.log") &
main=$!
(
  i=0
  while kill -0 "$main" 2>/dev/null; do
    i=$((i + 1))
    (cd "$work/beside" && CI=true npm test >"$work/beside.$i.log" 2>&1; echo "rc=$?" >>"$work/beside.$i.log")
  done
) &
beside=$!
wait "$main"
kill -- -"$beside" 2>/dev/null || kill "$beside" 2>/dev/null
pkill -f "$work/beside/" 2>/dev/null
tail -1 "$work/ci.log"
