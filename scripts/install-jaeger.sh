#!/usr/bin/env bash
# Builds Jaeger all-in-one, the trace backend the tests of internal/testjaeger
# (and the cross-process trace test of cmd/toolwire) run on loopback, once:
# into the git-ignored .cache/bin/jaeger-all-in-one, with a stamp of the
# version beside it; a second run with the same pin does nothing. Prints the
# binary's path on its last line.
#
# Jaeger is built in a module of its own under .cache/jaeger-build (it is
# not a dependency of toolwire's modules), everything through the Go module
# proxy. Jaeger's go.mod replaces Shopify/sarama; a replace applies only in
# the main module, so the same replace is copied here. The all-in-one of
# v1.76.0 is cmd/all-in-one (cmd/jaeger is the v2 binary, configured by a
# YAML file): it takes OTLP over gRPC and HTTP, keeps spans in memory and
# answers the query API, each port set by a flag. The first build takes a
# few minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=v1.76.0
sarama_replace='github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0'
bin="$root/.cache/bin"
out="$bin/jaeger-all-in-one"
stamp="$bin/jaeger-all-in-one.version"
want="github.com/jaegertracing/jaeger/cmd/all-in-one $version replace=$sarama_replace go=$(go env GOVERSION)"
if [ -x "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$out"
  exit 0
fi
echo "install-jaeger: building github.com/jaegertracing/jaeger/cmd/all-in-one $version into .cache/bin (a few minutes, once)" >&2
build="$root/.cache/jaeger-build"
rm -rf "$build"
mkdir -p "$build" "$bin"
cat > "$build/go.mod" <<MOD
// Written by scripts/install-jaeger.sh: the module Jaeger is built in.
module toolwire.test/jaeger-build

go 1.24.6

require github.com/jaegertracing/jaeger $version

replace $sarama_replace
MOD
start=$SECONDS
# -mod=mod lets go resolve Jaeger's dependencies and write go.sum here, from
# the module proxy (checked against the checksum database as usual). GOWORK=off:
# the build directory is inside the checkout, whose go.work would claim it.
(cd "$build" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
  -o "$out.tmp" github.com/jaegertracing/jaeger/cmd/all-in-one)
mv -f "$out.tmp" "$out"
echo "$want" > "$stamp"
echo "install-jaeger: built in $((SECONDS - start)) s" >&2
echo "$out"
