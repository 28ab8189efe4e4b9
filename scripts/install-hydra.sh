#!/usr/bin/env bash
# Builds Ory Hydra, the OAuth 2.1 / OpenID authorization server the tests of
# internal/testhydra (and the tests built on it) run on loopback, once: into
# the git-ignored .cache/bin/hydra, with a stamp of the version and build
# flags beside it; a second run with the same pin does nothing. Prints the
# binary's path on its last line.
#
# Hydra is built in a module of its own under .cache/hydra-build (it is not a
# dependency of toolwire's modules), everything through the Go module proxy.
# Hydra's go.mod replaces gobuffalo/pop with Ory's fork; a replace applies
# only in the main module, so the same replace is copied here. The SQLite
# build tags (cgo) give the in-memory database (DSN=memory) the tests use.
# The first build takes about 2 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=v2.3.0
pop_replace='github.com/gobuffalo/pop/v6 => github.com/ory/pop/v6 v6.2.1-0.20241121111754-e5dfc0f3344b'
tags=sqlite,sqlite_omit_load_extension
bin="$root/.cache/bin"
out="$bin/hydra"
stamp="$bin/hydra.version"
want="github.com/ory/hydra/v2 $version tags=$tags replace=$pop_replace go=$(go env GOVERSION)"
if [ -x "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$out"
  exit 0
fi
echo "install-hydra: building github.com/ory/hydra/v2 $version into .cache/bin (about 2 minutes, once)" >&2
build="$root/.cache/hydra-build"
rm -rf "$build"
mkdir -p "$build" "$bin"
cat > "$build/go.mod" <<EOF
// Written by scripts/install-hydra.sh: the module Hydra is built in.
module toolwire.test/hydra-build

go 1.22

require github.com/ory/hydra/v2 $version

replace $pop_replace
EOF
start=$SECONDS
# -mod=mod lets go resolve Hydra's dependencies and write go.sum here, from
# the module proxy (checked against the checksum database as usual). GOWORK=off:
# the build directory is inside the checkout, whose go.work would claim it.
(cd "$build" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=1 go build -trimpath -tags "$tags" \
  -ldflags "-X github.com/ory/hydra/v2/driver/config.Version=$version" \
  -o "$out.tmp" github.com/ory/hydra/v2)
mv -f "$out.tmp" "$out"
echo "$want" > "$stamp"
echo "install-hydra: built in $((SECONDS - start)) s" >&2
"$out" version >&2 || true
echo "$out"
