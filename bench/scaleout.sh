#!/usr/bin/env bash
# Scale-out, measured: N replicas of `toolwire serve data --http` on
# loopback ports, sharing Redis (table handles) and a data directory
# (tables as Parquet), behind haproxy (round-robin per request, the
# configuration in internal/testhaproxy/haproxy.cfg), driven by the load
# generator in bench/scaleout: one table loaded once, then CLIENTS
# clients calling head on it, each a stateless 2026-07-28 request on a
# keep-alive connection of its own. Prints calls/s, latency and the CPU
# (in cores) of the load generator, the replicas, haproxy, Redis and
# everything else on the machine (other users) for each replica count.
#
#   bench/scaleout.sh                      # REPLICAS="1 2 4" CLIENTS=32 DURATION=10s ROUNDS=1
#   REPLICAS="1 2 3 4" ROUNDS=3 bench/scaleout.sh
#
# Installs haproxy and redis-server with apt-get when they are missing
# (as root). Everything listens on 127.0.0.1; every process it starts is
# stopped by its PID when it ends.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
REPLICAS=${REPLICAS:-"1 2 4"}
CLIENTS=${CLIENTS:-32}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
ROUNDS=${ROUNDS:-1}
ROWS=${ROWS:-10000}

"$root/scripts/install-haproxy.sh"
"$root/scripts/install-redis.sh"
command -v haproxy >/dev/null || { echo "scaleout: haproxy is required (apt-get install haproxy)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "scaleout: redis-server is required (apt-get install redis-server)" >&2; exit 1; }

work=$(mktemp -d /tmp/toolwire-scaleout.XXXXXX)
pids=()
stop_all() {
  for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null || true; done
  for p in ${pids[@]+"${pids[@]}"}; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT

echo "toolwire $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . || echo '+dirty'), haproxy $(dpkg-query -W -f='${Version}' haproxy 2>/dev/null || haproxy -v | head -n 1), redis $(redis-server --version | grep -o 'v=[^ ]*'), $(nproc) cores, $(uname -r)"
echo "clients $CLIENTS, warm-up $WARMUP, window $DURATION, rounds $ROUNDS, table $ROWS rows"
(cd "$root" && go build -o "$work/toolwire" ./cmd/toolwire)
(cd "$root/bench" && go build -o "$work/scaleout" ./scaleout)

mkdir -p "$work/files" "$work/tables"
{
  echo "id,region,amount"
  for ((i = 0; i < ROWS; i++)); do echo "$i,r$((i % 7)),$((i * 37 % 1000))"; done
} >"$work/files/sales.csv"

# free_port prints a loopback port nobody listens on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
}
# wait_port waits (30 s at most) until 127.0.0.1:$1 accepts connections;
# $2 is the log of the process that should.
wait_port() {
  for _ in $(seq 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "scaleout: nothing listens on 127.0.0.1:$1 after 30s; $2 says: $(cat "$2")" >&2
  return 1
}

for round in $(seq "$ROUNDS"); do
  for n in $REPLICAS; do
    rport=$(free_port)
    redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
    rpid=$!
    pids+=("$rpid")
    wait_port "$rport" "$work/redis.log"
    rm -rf "$work/tables"/*
    servers=()
    rpids=()
    for i in $(seq "$n"); do
      "$work/toolwire" serve data --http 127.0.0.1:0 --allow-dir "$work/files" --data-dir "$work/tables" \
        --redis "127.0.0.1:$rport" >"$work/r$i.out" 2>"$work/r$i.err" &
      pids+=("$!")
      rpids+=("$!")
    done
    for i in $(seq "$n"); do
      for _ in $(seq 600); do
        addr=$(grep -o 'http://[0-9.:]*/mcp' "$work/r$i.out" 2>/dev/null | head -n 1 || true)
        [ -n "$addr" ] && break
        sleep 0.05
      done
      [ -n "$addr" ] || { echo "scaleout: replica $i did not start: $(cat "$work/r$i.err")" >&2; exit 1; }
      addr=${addr#http://}
      servers+=("    server r$i ${addr%/mcp}")
    done
    hport=$(free_port)
    # The committed template, with its two placeholders filled in.
    awk -v bind="127.0.0.1:$hport" -v servers="$(printf '%s\n' "${servers[@]}")" \
      '{ gsub(/@BIND@/, bind) } /^@SERVERS@$/ { print servers; next } { print }' \
      "$root/internal/testhaproxy/haproxy.cfg" >"$work/haproxy.cfg"
    haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
    hpid=$!
    pids+=("$hpid")
    wait_port "$hport" "$work/haproxy.log"
    echo "== round $round, replicas $n"
    "$work/scaleout" -url "http://127.0.0.1:$hport/mcp" -csv "$work/files/sales.csv" -clients "$CLIENTS" \
      -warmup "$WARMUP" -duration "$DURATION" \
      -cpu "replicas=$(IFS=,; echo "${rpids[*]}")" -cpu "haproxy=$hpid" -cpu "redis=$rpid"
    if [ "$n" = 1 ]; then
      # The same replica without haproxy: what the load balancer costs.
      echo "== round $round, replicas 1, direct (no haproxy)"
      "$work/scaleout" -url "http://${servers[0]##* }/mcp" -csv "$work/files/sales.csv" -clients "$CLIENTS" \
        -warmup "$WARMUP" -duration "$DURATION" \
        -cpu "replicas=${rpids[0]}" -cpu "redis=$rpid"
    fi
    stop_all
  done
done
