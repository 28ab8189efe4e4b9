#!/usr/bin/env bash
# The mutation check: for each guard listed in scripts/mutations.txt (the
# format is described at its top), remove the guard in a copy of the tree
# and run the test that must catch it; report, one line per guard:
#
#   caught  NAME  (the test failed without the guard)
#   MISSED  NAME  (the test passed, or the mutated code did not compile)
#   STALE   NAME  (the guard's text is not in its file exactly once)
#
# and exit non-zero if any guard is missed or stale. The working tree is
# never touched: the tracked and untracked (not ignored) files, as they
# are now, are copied to a temporary directory, and each edit is undone
# there before the next. Tests run without -race, with -count=1 and a
# timeout (MUTATION_TIMEOUT, default 5m). Arguments, if any, are the names
# of the entries to run (default: all).
#
# MUTATION_JOBS=N (default 1) runs N checks at once, each over every Nth
# entry in a copy of its own (most entries wait on a link of the CLI, which
# uses one core), and prints their reports one after the other;
# MUTATION_SHARD=I/N is one such check, the entries I, I+N, I+2N... (from 0).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=${MUTATIONS:-$root/scripts/mutations.txt}
timeout=${MUTATION_TIMEOUT:-5m}

jobs=${MUTATION_JOBS:-1}
if [ -z "${MUTATION_SHARD:-}" ] && [ "$jobs" -gt 1 ]; then
  logs=$(mktemp -d "${TMPDIR:-/tmp}/toolwire-mutation-logs.XXXXXX")
  trap 'rm -rf "$logs"' EXIT
  pids=()
  for ((i = 0; i < jobs; i++)); do
    MUTATION_SHARD=$i/$jobs "$0" "$@" >"$logs/$i" 2>&1 &
    pids+=($!)
  done
  status=0
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$logs/$i"
  done
  exit "$status"
fi
shard=${MUTATION_SHARD:-0/1}
shard_i=${shard%/*} shard_n=${shard#*/}
if ! [[ $shard_i =~ ^[0-9]+$ && $shard_n =~ ^[1-9][0-9]*$ ]] || [ "$shard_i" -ge "$shard_n" ]; then
  echo "MUTATION_SHARD=$shard: want I/N with 0 <= I < N" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/toolwire-mutation.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
mkdir "$tree"
# The files git knows of or would add, as they are in the working tree
# (uncommitted edits included; files deleted but not yet staged left out).
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  perl -0 -ne 'chomp; print "$_\0" if -f $_' | tar --null -T - -cf -) | tar -xf - -C "$tree"
# The git-ignored .cache (the pinned Node peers, the Hydra binary) is not
# copied but linked, so that the tests that use them run rather than skip.
if [ -d "$root/.cache" ]; then ln -s "$root/.cache" "$tree/.cache"; fi

dirty=
if [ -n "$(cd "$root" && git status --porcelain --untracked-files=normal)" ]; then dirty=" with uncommitted changes"; fi
echo "mutation check of $(cd "$root" && git rev-parse --short HEAD)$dirty: the guards of ${list#"$root"/}"

declare -A want=()
for n in "$@"; do want[$n]=1; done

missed=0 entries=0 seen=0 start=$SECONDS
# run_entry applies, tests and undoes one entry (its fields in name, file,
# old, new, dir, pkg, run; has_new is set when the entry has a "new" line)
# and prints its report line.
run_entry() {
  if [ ${#want[@]} -gt 0 ] && [ -z "${want[$name]:-}" ]; then return; fi
  seen=$((seen + 1))
  if [ $(((seen - 1) % shard_n)) -ne "$shard_i" ]; then return; fi
  entries=$((entries + 1))
  local n
  for n in file old dir pkg run has_new; do
    if [ -z "${!n}" ]; then
      echo "STALE   $name  (its entry, before $list:$lineno, has no \"${n#has_}\")"
      missed=$((missed + 1))
      return
    fi
  done
  local target=$tree/$file
  if [ ! -f "$target" ]; then
    echo "STALE   $name  ($file does not exist)"
    missed=$((missed + 1))
    return
  fi
  cp "$target" "$tmp/orig"
  local found
  if ! found=$(OLD=$old NEW=$new perl -0777 -ne '
      my ($o, $n) = ($ENV{OLD}, $ENV{NEW});
      my $i = index($_, $o);
      my $c = 0;
      for (my $j = $i; $j >= 0; $j = index($_, $o, $j + 1)) { $c++ }
      if ($c != 1) { print STDERR $c; exit 3 }
      substr($_, $i, length $o) = $n;
      print' "$tmp/orig" 2>&1 >"$target"); then
    cp "$tmp/orig" "$target"
    echo "STALE   $name  (the original text occurs ${found:-?} times in $file, not once: $old)"
    missed=$((missed + 1))
    return
  fi
  local t0=$SECONDS out status=0
  out=$(cd "$tree/$dir" && go test -count=1 -timeout "$timeout" -run "$run" "$pkg" 2>&1 </dev/null) || status=$?
  cp "$tmp/orig" "$target"
  local took=$((SECONDS - t0))s test="$dir: go test -run '$run' $pkg"
  if [ "$status" -eq 0 ]; then
    echo "MISSED  $name  (test passed without the guard: $test, $took)"
    missed=$((missed + 1))
  elif grep -qE '\[(build|setup) failed\]|^# ' <<<"$out"; then
    echo "MISSED  $name  (the code without the guard does not compile, so no test ran: $test)"
    sed -n '1,20s/^/        /p' <<<"$out"
    missed=$((missed + 1))
  else
    echo "caught  $name  (test $test, $took)"
    grep -m 4 -E -e '--- FAIL|_test\.go:[0-9]+:|panic:|fatal error:' <<<"$out" | cut -c1-200 | sed 's/^/        /' || true
  fi
}

# Entries: blocks of "key value" lines; "name" starts one.
name= file= old= new= has_new= dir= pkg= run= lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  case $line in
    '' | '#'*) continue ;;
  esac
  key=${line%% *}
  value=${line#* }
  [ "$value" = "$line" ] && value=
  case $key in
    name)
      if [ -n "$name" ]; then run_entry; fi
      name=$value file= old= new= has_new= dir= pkg= run=
      ;;
    new) new=$value has_new=1 ;; # may be empty: the guard's text deleted
    file | old | dir | pkg | run) printf -v "$key" '%s' "$value" ;;
    *)
      echo "$list:$lineno: unknown key \"$key\" (want name, file, old, new, dir, pkg or run)" >&2
      exit 2
      ;;
  esac
done <"$list"
if [ -n "$name" ]; then run_entry; fi

if [ "$shard_n" -gt 1 ]; then
  echo "mutation check, part $((shard_i + 1)) of $shard_n: $entries guards, $missed missed or stale, $((SECONDS - start))s"
else
  echo "mutation check: $entries guards, $missed missed or stale, $((SECONDS - start))s"
fi
[ "$missed" -eq 0 ]
