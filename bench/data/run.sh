#!/usr/bin/env bash
# load_csv throughput and peak memory of the data toolset on a generated
# 1 GB CSV, next to pandas (Debian's python3-pandas) doing the same flow:
# read -> drop rows with missing values -> describe. The file goes to the
# git-ignored .cache/bench and is made once. Results: bench/README.md.
#
#   bench/data/run.sh [SIZE_BYTES]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
size=${1:-1073741824}
dir="$root/.cache/bench"
mkdir -p "$dir"
csv="$dir/sales-$size.csv"
(cd "$root/toolsets/data" && go build -o "$dir/databench" ./cmd/databench)
echo "== toolwire data toolset (DuckDB)"
"$dir/databench" -csv "$csv" -generate-bytes "$size"
if ! /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pandas >/dev/null
  else
    echo "pandas is missing: apt-get install python3-pandas" >&2
    exit 1
  fi
fi
echo "== pandas"
/usr/bin/python3 "$root/bench/data/pandas_flow.py" "$csv"
