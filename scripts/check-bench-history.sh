#!/usr/bin/env bash
# Checks that cutting bench/README.md down lost no text: every non-blank
# line of bench/README.md at an earlier commit that the current file no
# longer has must be, word for word, a line of a history file in
# bench/results/ (history-*.md).
#
#   ./scripts/check-bench-history.sh [COMMIT]   # default 8ccec08, the file before the cut
#
# Prints each line it cannot find and exits 1 if there is one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-8ccec08}
cd "$root"
old=$(mktemp) keep=$(mktemp)
trap 'rm -f "$old" "$keep"' EXIT
git show "$rev:bench/README.md" | grep -v '^[[:space:]]*$' >"$old"
cat bench/README.md bench/results/history-*.md >"$keep"
# -F fixed strings, -x whole lines: a line is kept only if it is there as is.
missing=$(grep -vxFf "$keep" "$old" || true)
if [ -n "$missing" ]; then
	printf '%s\n' "$missing"
	echo "check-bench-history: $(printf '%s\n' "$missing" | wc -l) line(s) of bench/README.md at $rev are in neither bench/README.md nor bench/results/history-*.md" >&2
	exit 1
fi
echo "check-bench-history: all $(wc -l <"$old") non-blank lines of bench/README.md at $rev are in bench/README.md or bench/results/history-*.md"
