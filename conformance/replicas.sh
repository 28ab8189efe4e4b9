#!/usr/bin/env bash
# Runs the Tasks extension's conformance scenarios (tasks-*, of the pinned
# suite's 2026-07-28 requirements) against two replicas of toolwire's
# conformance server sharing a Redis task store, behind haproxy on
# loopback (internal/testhaproxy/haproxy.cfg: round-robin per request, so
# consecutive requests of a scenario reach different replicas). Every
# scenario must pass. conformance/run.sh calls it; alone:
#
#   conformance/replicas.sh SERVER_BINARY SUITE OUT_DIR SCENARIO...
#
# It starts redis-server, the replicas and haproxy, and stops them (by
# PID) when it ends. Needs haproxy and redis-server (scripts/
# install-haproxy.sh, scripts/install-redis.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
server=$1 suite=$2 out=$3
shift 3
scenarios=$*
[ -n "$scenarios" ] || { echo "FAIL: replicas: name the scenarios to run"; exit 1; }
"$root/scripts/install-haproxy.sh"
"$root/scripts/install-redis.sh"
for cmd in haproxy redis-server; do
  command -v "$cmd" >/dev/null || { echo "FAIL: replicas: $cmd is required (scripts/install-haproxy.sh, scripts/install-redis.sh)"; exit 1; }
done
work=$(mktemp -d)
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  rm -rf "$work"
}
trap stop_all EXIT

# free_port prints a loopback port nobody listens on.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
}
# wait_port waits (10 s at most) until 127.0.0.1:$1 accepts connections;
# $2 is the log of the process that should.
wait_port() {
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "FAIL: replicas: nothing listens on 127.0.0.1:$1 after 10s; $2 says: $(cat "$2")"
  return 1
}

rport=$(free_port)
redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --dir "$work" >"$out/replicas-redis.log" 2>&1 &
pids+=("$!")
wait_port "$rport" "$out/replicas-redis.log"
# One key signs the requestState of multi round-trip requests on both.
head -c 32 /dev/urandom >"$work/state.key"
servers=()
for i in 1 2; do
  port=$(free_port)
  "$server" -addr "127.0.0.1:$port" -redis "127.0.0.1:$rport" -state-key-file "$work/state.key" >"$out/replica-$i.log" 2>&1 &
  pids+=("$!")
  wait_port "$port" "$out/replica-$i.log"
  servers+=("    server r$i 127.0.0.1:$port")
done
hport=$(free_port)
# The committed template, with its two placeholders filled in.
awk -v bind="127.0.0.1:$hport" -v servers="$(printf '%s\n' "${servers[@]}")" \
  '{ gsub(/@BIND@/, bind) } /^@SERVERS@$/ { print servers; next } { print }' \
  "$root/internal/testhaproxy/haproxy.cfg" >"$work/haproxy.cfg"
haproxy -db -f "$work/haproxy.cfg" >"$out/replicas-haproxy.log" 2>&1 &
pids+=("$!")
wait_port "$hport" "$out/replicas-haproxy.log"
url="http://127.0.0.1:$hport/mcp"

status=0 n=0 passed=0 checks=0 skipped=""
log="$out/replicas.txt"
: >"$log"
for s in $scenarios; do
  n=$((n + 1))
  set +e
  "$suite" server --url "$url" --scenario "$s" --timeout 30000 >"$work/one.txt" 2>&1
  rc=$?
  set -e
  cat "$work/one.txt" >>"$log"
  # "Passed: P/T, F failed, W warnings": a pass has no failure and no
  # warning. A scenario the suite skips (0/0, SKIPPED) is said apart.
  line=$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$work/one.txt" || true)
  if [ "$rc" -eq 0 ] && [[ "$line" =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed,\ 0\ warnings ]]; then
    checks=$((checks + ${BASH_REMATCH[1]}))
    if [ "${BASH_REMATCH[2]}" = 0 ]; then
      skipped="$skipped $s"
    else
      passed=$((passed + 1))
    fi
  else
    echo "FAIL: $s behind haproxy (2 replicas, Redis tasks): ${line:-no result line} (exit $rc); details in $log"
    status=1
  fi
done
nskip=$(wc -w <<<"$skipped")
echo "replicas: $n tasks scenarios behind haproxy (2 replicas, Redis task store): $passed passed ($checks checks), $nskip skipped by the suite (no checks)${skipped:+:$skipped}, $((n - passed - nskip)) failed"
exit "$status"
