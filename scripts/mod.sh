#!/usr/bin/env bash
# Runs a go command that edits a go.mod (go get, go mod tidy) in one of the
# repository's modules, given by its directory:
#
#   ./scripts/mod.sh cmd/toolwire get github.com/some/module@v1.2.3
#   ./scripts/mod.sh toolsets/data mod tidy
#
# The modules require each other at a placeholder version that no proxy
# serves; go.work points it at the checkout, but go get and go mod tidy
# resolve one module on its own. So this runs the command with GOWORK=off
# and go.work's replace directives added to the module's go.mod for the
# time of the command, then removes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 MODULE_DIR GO_ARGS...   (e.g. $0 cmd/toolwire mod tidy)" >&2
  exit 2
fi
dir=$1
shift
if [ ! -f "$root/$dir/go.mod" ]; then
  echo "$0: $dir is not a module directory (no $dir/go.mod): give a directory of go.work's use list" >&2
  exit 2
fi
cd "$root/$dir"
self=$(awk '$1 == "module" { print $2; exit }' go.mod)
add=() drop=()
# go.work's replace block: "PATH VERSION => DIR" lines.
while read -r path version arrow target; do
  if [ "$arrow" != "=>" ] || [ "$path" = "$self" ]; then continue; fi
  add+=("-replace=$path@$version=$root/${target#./}")
  drop+=("-dropreplace=$path@$version")
done < <(sed -n '/^replace (/,/^)/p' "$root/go.work")
if [ ${#add[@]} -gt 0 ]; then
  trap 'GOWORK=off go mod edit "${drop[@]}"' EXIT
  GOWORK=off go mod edit "${add[@]}"
fi
GOWORK=off go "$@"
