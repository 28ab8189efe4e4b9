#!/usr/bin/env bash
# The project's test command: installs the pinned npm peers the tests run
# against (Node 22 with npx, the TypeScript SDK, reference servers) into
# .cache, builds Ory Hydra and Jaeger there, then runs every Go test with the race
# detector. Extra arguments go to go test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
nodebin=$(./scripts/install-test-deps.sh | tail -n 1)
export PATH="$nodebin:$PATH"
# Tests that need Node fail instead of skipping when it is missing.
export TOOLWIRE_REQUIRE_NODE=1
# Ory Hydra, the authorization server of the OAuth tests
# (internal/testhydra), built once into .cache/bin.
./scripts/install-hydra.sh >/dev/null
# redis-server and haproxy, for the tests that run replicas behind a load
# balancer (cmd/toolwire TestServeReplicaKill, TestServeAuthReplicas) and
# the Redis handle store's: installed before any test needs them.
./scripts/install-redis.sh
./scripts/install-haproxy.sh
# Jaeger all-in-one, the trace backend of the telemetry tests
# (internal/testjaeger), built once into .cache/bin.
./scripts/install-jaeger.sh >/dev/null
go vet ./...
# Go's test cache skips packages whose code and inputs did not change; CI
# (CI=true) runs everything fresh.
count=()
if [ "${CI:-}" = true ]; then count=(-count=1); fi
go test -race ${count[@]+"${count[@]}"} "$@" ./...
# The other modules of the workspace (go.work): the CLI, the conformance
# fixtures, the data toolset (DuckDB, cgo) and the Redis handle store, whose
# tests run redis-server.
for m in cmd/toolwire conformance handle/redisstore toolsets/data; do
  (cd "$m" && go vet ./... && go test -race ${count[@]+"${count[@]}"} "$@" ./...)
done
