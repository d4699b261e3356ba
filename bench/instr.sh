#!/usr/bin/env bash
# instr.sh - what memcheck adds a step in instructions, which load does
# not move: the before and after `make bench` cannot resolve on a busy
# machine.
#
#   bench/instr.sh BUILD_DIR        (make bench-instr runs it)
#
# Environment: BENCH_OTHER=FILE (another libmemcheck.so, main's say:
# counted beside this one), INSTR_STEPS (the shorter run's steps,
# 1,000,000; the longer runs twice as many).
#
# Each workload (the allocation loop, bench/malloc_bench.c, and the
# deep-stack parser, bench/tree_bench.c; under glibc) runs bare, with this
# library and with BENCH_OTHER's, each at N and 2N steps under valgrind's
# cachegrind without its cache model; a step's instructions are the
# slope between the two, so that start-up and exit (the same in both
# runs) fall out.  The table: the bare step, each library's added
# instructions a step, and BENCH_OTHER's less this one's.  Why: session
# 48's tree read 3.5-13 ns a step slower with main's library than with
# 68cf1f5's in `make bench`, where the two count the same instructions
# to 0.0002 a step and `make bench` read one library against a copy of
# itself as far apart (doc/costs.md, tree50).
#
# Instructions are not time: a step's cache and TLB misses (the tree's
# stack lines, the block table's) and its placement are not in them;
# doc/costs.md's paragraphs weigh both.
set -u
export LC_ALL=C

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
OTHER=${BENCH_OTHER:-}
STEPS=${INSTR_STEPS:-1000000}
[ "$STEPS" -ge 1000 ] 2>/dev/null || { echo "instr.sh: INSTR_STEPS must be >= 1000" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instr.sh: valgrind not installed (make deps)" >&2; exit 2; }
for b in malloc_bench tree_bench; do
	[ -x "$BUILD/bench/$b" ] || { echo "instr.sh: $BUILD/bench/$b not built" >&2; exit 2; }
done
[ -e "$BUILD/libmemcheck.so" ] || { echo "instr.sh: $BUILD/libmemcheck.so not built" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-instr.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

# The library copied, the environment cleaned: bench/common.sh.
. "$(dirname "$0")/common.sh"
export MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0

# count PRELOAD BIN STEPS: the process's instructions in REPLY
count() {
	local n
	# shellcheck disable=SC2086 # no preload: the word is empty
	env ${1:+LD_PRELOAD="$1"} valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file=/dev/null "$2" "$3" >"$TMP/out" 2>"$TMP/err" || {
		echo "instr.sh: $2 $3 failed under valgrind${1:+ with $1}:" >&2
		cat "$TMP/err" >&2
		exit 1
	}
	n=$(sed -n 's/^==[0-9]*== I *refs: *\([0-9,]*\)$/\1/p' "$TMP/err" | tr -d ,)
	[ -n "$n" ] || { echo "instr.sh: no instruction count in valgrind's summary:" >&2; cat "$TMP/err" >&2; exit 1; }
	REPLY=$n
}

# slope PRELOAD BIN: instructions a step, in REPLY (three decimals)
slope() {
	local a
	count "$1" "$2" "$STEPS"
	a=$REPLY
	count "$1" "$2" $((2 * STEPS))
	REPLY=$(awk -v a="$a" -v b="$REPLY" -v n="$STEPS" 'BEGIN { printf "%.3f", (b - a) / n }')
}

echo "memcheck instructions a step: slope between $STEPS and $((2 * STEPS)) steps, cachegrind, glibc"
echo "library: $(readlink -f "$BUILD/libmemcheck.so") (md5 $(md5sum <"$MC" | cut -c1-12))"
[ -n "$OTHER" ] && echo "other library (BENCH_OTHER): $(readlink -f "$OTHER") (md5 $(md5sum <"$OTHER_MC" | cut -c1-12))"
printf '%-40s %10s %12s %12s %12s\n' workload bare "+this" "+other" "other-this"
for b in malloc_bench tree_bench; do
	case $b in
	malloc_bench) what="malloc loop (malloc_bench.c)" ;;
	tree_bench) what="parser, deep stacks (tree_bench.c)" ;;
	esac
	slope "" "$BUILD/bench/$b"
	bare=$REPLY
	slope "$MC" "$BUILD/bench/$b"
	this=$REPLY
	other=-
	if [ -n "$OTHER" ]; then
		slope "$OTHER_MC" "$BUILD/bench/$b"
		other=$REPLY
	fi
	awk -v w="$what" -v b="$bare" -v t="$this" -v o="$other" 'BEGIN {
		if (o == "-")
			printf "%-40s %10.1f %+12.3f %12s %12s\n", w, b, t - b, "-", "-"
		else
			printf "%-40s %10.1f %+12.3f %+12.3f %+12.3f\n", w, b, t - b, o - b, o - t
	}'
done
