#!/usr/bin/env bash
# Round-robin benchmark run for a shared, noisy machine.
#
#   ./roundrobin.sh OUT ROUNDS [BENCH_REGEXP]
#
# Builds the test binary once, then runs every benchmark ROUNDS times in
# strict round-robin (one -count per round, servers interleaved inside each
# benchmark), appending the results to OUT. Before each round it waits (up
# to ~3 min) until the machine is below 10% busy, and it logs to OUT.log
# how much CPU the whole machine used during the round next to how much
# this run (test binary and the servers it spawned) used: the difference is
# other people's load. Drop the rounds where it is more than a few CPU
# seconds before running benchstat. Run it from bench/.
set -euo pipefail
out=$1 rounds=$2 re=${3:-.}
go test -c -o bench.test .
: >"$out"
: >"$out.log"
hz=$(getconf CLK_TCK)

# cpu_jiffies prints "busy total" jiffies of all CPUs.
cpu_jiffies() {
	read -r _ u n s i w q sq st _ </proc/stat
	echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"
}

busy_fraction() { # over 3 seconds, in percent
	local a b
	a=($(cpu_jiffies)); sleep 3; b=($(cpu_jiffies))
	echo $(((b[0] - a[0]) * 100 / (b[1] - a[1])))
}

for r in $(seq 1 "$rounds"); do
	for _ in $(seq 1 60); do
		b=$(busy_fraction)
		((b < 10)) && break
	done
	a=($(cpu_jiffies))
	t0=$(date +%s.%N)
	# bash's times would include earlier rounds: measure this round's
	# children with /proc/self/stat of a subshell instead.
	own=$( (./bench.test -test.run '^$' -test.bench "$re" >>"$out"
		read -r -a st </proc/self/stat 2>/dev/null || true
		# fields 16 and 17: cutime, cstime of the subshell (waited children)
		echo $(((st[15] + st[16]))) ) )
	c=($(cpu_jiffies))
	t1=$(date +%s.%N)
	printf 'round %d: busy-before %d%%, wall %.0fs, machine CPU %.1fs, this run %.1fs, foreign %.1fs\n' \
		"$r" "$b" "$(echo "$t1 - $t0" | bc)" "$(echo "($c - ${a[0]}) / $hz" | bc -l)" \
		"$(echo "$own / $hz" | bc -l)" "$(echo "($c - ${a[0]} - $own) / $hz" | bc -l)" >>"$out.log"
done
