#!/usr/bin/env bash
# Seed 000's flow for real over MCP, on a fresh machine with no key and no
# network: builds toolwire (with the data toolset), launches
# `toolwire serve data` on stdio next to the shipped sample CSV, calls
# load_csv, drop_missing and describe, and prints what each tool returned
# to the model next to the size of the data it handled.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.cache/seed000"
mkdir -p "$bin"
(cd "$root" && go build -o "$bin/toolwire" ./cmd/toolwire)
cd "$root/toolsets/data"
go run ./cmd/seed000 -server "$bin/toolwire" -csv "$root/testdata/data/sales.csv" "$@"
