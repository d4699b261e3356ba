#!/usr/bin/env bash
# instr.sh - instructions a malloc_bench step under each allocator, by
# mode, and a tree_bench step under glibc: the load-proof half of `make
# bench` (make bench-instr).
#
#   bench/instr.sh BUILD_DIR
#
# Each mode runs malloc_bench under callgrind at two lengths
# (INSTR_STEPS and twice that); the difference of the instruction totals
# over the difference of steps is a step's instructions, start-up and
# exit cancelled.  Callgrind counts what the CPU would retire, whatever
# the load, so two libraries' figures from runs hours apart compare
# exactly, where the time rows of `make bench` compare only within a
# round.  Modes: bare, the forwarding-only preload (null_interpose.c),
# the floor preload (floor_interpose.c), memcheck counting
# (MEMCHECK_TRACK=0), tracking without stacks (MEMCHECK_STACK_DEPTH=0) and
# with them (MEMCHECK_UNWINDER=fp, the defaults); with BENCH_OTHER=FILE
# the other library's counting and tracking too, in the same table.
# The aligned rows (abare, acount, aocount with BENCH_OTHER) run the loop
# with its new blocks from aligned_alloc(64, size) (malloc_bench --align
# 64), shown over their own bare run: count-only's aligned family
# (session 52: it took the tracking path's guard before, +108
# instructions a step where malloc's path adds 21).
# The deep-stack parser (tree_bench.c, its steps a tenth of the loop's)
# runs bare and tracking with stacks (and BENCH_OTHER's) under glibc:
# session 48's tree "regression" of main over 68cf1f5 (+3.5 to +13 ns a
# step by time) counted the same instructions a step (doc/costs.md,
# tree50).
# memcheck does not scrub new blocks under valgrind (MEMCHECK_SCRUB: it
# would hide the program's reads of uninitialised bytes from valgrind),
# so the tracking rows leave the scrub out; the floor's scrubbing mode
# (FLOOR_SCRUB) is left out for the same reason.
#
# Environment: INSTR_STEPS (100000), BENCH_MODES (a regex over the mode
# names bare fwd floor count track fp ocount ofp: only those; bare is
# always run, the other rows are shown over it), BENCH_OTHER.  Prints a
# Markdown table and writes it to BUILD_DIR/bench/instr.md.  Exits
# non-zero when a run fails or gives a different checksum than the bare
# run.  Needs valgrind (make deps).
set -u
export LC_ALL=C

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
STEPS=${INSTR_STEPS:-100000}
OTHER=${BENCH_OTHER:-}
BIN=$BUILD/bench/malloc_bench
TREE_BIN=$BUILD/bench/tree_bench
NULL_LIB=$BUILD/bench/libnull_interpose.so
FLOOR_LIB=$BUILD/bench/libfloor_interpose.so
LIBDIR=/usr/lib/x86_64-linux-gnu

command -v valgrind >/dev/null || { echo "instr.sh: no valgrind (make deps)" >&2; exit 2; }
for b in "$BIN" "$TREE_BIN"; do
	[ -x "$b" ] || { echo "instr.sh: $b not built" >&2; exit 2; }
done
[ "$STEPS" -ge 1000 ] 2>/dev/null || { echo "instr.sh: INSTR_STEPS must be a number >= 1000" >&2; exit 2; }

declare -A ALLOC_LIB SUM SLOPE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-instr.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
# The library copied with the suppressions beside it, the environment
# cleaned, the allocators as run.sh reads them: bench/common.sh.
. "$(dirname "$0")/common.sh"
read_allocators

# name | preload (the allocator after it) | environment | label | the
# program's arguments | the bare run it is shown over
MODES=(bare fwd floor count track fp abare acount)
declare -A PRE=([bare]='' [fwd]=$NULL_LIB [floor]=$FLOOR_LIB [count]=$MC [track]=$MC [fp]=$MC
	[abare]='' [acount]=$MC)
declare -A ENV=([count]=MEMCHECK_TRACK=0 [track]=MEMCHECK_STACK_DEPTH=0 [fp]=MEMCHECK_UNWINDER=fp
	[acount]=MEMCHECK_TRACK=0)
declare -A LABEL=([bare]="bare" [fwd]="forwarding only (null_interpose.c)"
	[floor]="floor preload: 16-frame walk + table" [count]="counting (TRACK=0)"
	[track]="tracking, no stacks (DEPTH=0), no scrub" [fp]="tracking + stacks, fp (defaults), no scrub"
	[abare]="aligned_alloc(64): bare" [acount]="aligned_alloc(64): counting (TRACK=0)")
declare -A ARGS=([abare]="--align 64" [acount]="--align 64")
declare -A REF=([abare]=abare [acount]=abare)
if [ -n "$OTHER" ]; then
	MODES+=(ocount ofp aocount)
	PRE[ocount]=$OTHER_MC PRE[ofp]=$OTHER_MC PRE[aocount]=$OTHER_MC
	ENV[ocount]=MEMCHECK_TRACK=0 ENV[ofp]=MEMCHECK_UNWINDER=fp ENV[aocount]=MEMCHECK_TRACK=0
	LABEL[ocount]="other: counting (TRACK=0)" LABEL[ofp]="other: tracking + stacks, fp, no scrub"
	LABEL[aocount]="other: aligned_alloc(64): counting (TRACK=0)"
	ARGS[aocount]="--align 64" REF[aocount]=abare
fi
if [ -n "${BENCH_MODES:-}" ]; then
	kept=()
	for m in "${MODES[@]}"; do
		# the bare runs the kept rows are shown over, too
		[[ $m = bare || $m =~ ^($BENCH_MODES)$ || ($m = abare && $BENCH_MODES =~ a) ]] && kept+=("$m")
	done
	MODES=("${kept[@]}")
fi
for m in "${MODES[@]}"; do
	[ -z "${PRE[$m]}" ] || [ -e "${PRE[$m]}" ] || { echo "instr.sh: ${PRE[$m]} not built" >&2; exit 2; }
done

ir() { # alloc mode steps [warm] -> the run's instructions in REPLY
	local a=$1 m=$2 n=$3 lib=${ALLOC_LIB[$1]} pre out=$TMP/cg.$1.$2.$3 sum tool=()
	pre="${PRE[$m]}${lib:+ $lib}"
	pre=${pre# }
	[ $# -gt 3 ] || tool=(valgrind --tool=callgrind --callgrind-out-file="$out")
	# shellcheck disable=SC2086 # ENV is a word list
	env ${pre:+LD_PRELOAD="$pre"} MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0 \
		${ENV[$m]:-} "${tool[@]}" "$RUN_BIN" "$n" ${ARGS[$m]:-} >"$TMP/out" 2>"$TMP/err" ||
		{ echo "instr.sh: $a/$m ($n steps) failed:" >&2; tail -n 5 "$TMP/err" >&2; exit 1; }
	[ $# -gt 3 ] && return
	read -r sum <"$TMP/out"
	[[ " $sum " =~ \ checksum=([^ ]*)\  ]] && sum=${BASH_REMATCH[1]} # not the loop's time
	if [ "$m" = bare ]; then
		SUM[$a.$n]=$sum
	elif [ "$sum" != "${SUM[$a.$n]}" ]; then
		echo "instr.sh: $a/$m printed '$sum', the bare run '${SUM[$a.$n]}': the program changed" >&2
		exit 1
	fi
	REPLY=$(awk '/^(summary|totals):/ { print $2; exit }' "$out")
	rm -f "$out"
	[ -n "$REPLY" ] || { echo "instr.sh: $a/$m: no totals in callgrind's output" >&2; exit 1; }
}

# slope ALLOC MODE STEPS: a step's instructions into SLOPE[ALLOC/MODE]
slope() {
	local a=$1 m=$2 n=$3 lo
	# memcheck's file:line cache (common.sh: fresh for the run) filled
	# first: its first process's exit names what later ones read, and
	# under tcmalloc that exit (its own block's suppression) was
	# ~900,000 instructions more than a warm one's, 9 a step of the
	# slope when it fell on the shorter run
	ir "$a" "$m" 1000 warm
	ir "$a" "$m" "$n"
	lo=$REPLY
	ir "$a" "$m" $((2 * n))
	SLOPE[$a/$m]=$(awk -v a="$lo" -v b="$REPLY" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
	echo "  $a $m ${SLOPE[$a/$m]}" >&2
}

echo "instructions a malloc_bench step (callgrind: $STEPS -> $((2 * STEPS)) steps), library md5 $(md5sum <"$MC" | cut -c1-12)" >&2
RUN_BIN=$BIN
for a in "${ALLOCS[@]}"; do
	for m in "${MODES[@]}"; do
		slope "$a" "$m" "$STEPS"
	done
done
# the tree under glibc: bare, tracking with stacks, BENCH_OTHER's
TREE_STEPS=$(( STEPS / 10 < 1000 ? 1000 : STEPS / 10 ))
TREE_MODES=()
for m in bare fp ofp; do
	[[ " ${MODES[*]} " = *" $m "* ]] && TREE_MODES+=("$m")
done
RUN_BIN=$TREE_BIN
ALLOC_LIB[tree]=
for m in "${TREE_MODES[@]}"; do
	slope tree "$m" "$TREE_STEPS"
done

mkdir -p "$BUILD/bench"
{
	echo "# Instructions a step"
	echo
	echo "$(date -u +%Y-%m-%d), callgrind, malloc_bench $STEPS -> $((2 * STEPS)) steps, library md5 $(md5sum <"$MC" | cut -c1-12)${OTHER:+, other library md5 $(md5sum <"$OTHER_MC" | cut -c1-12)}; each row: a step's instructions in all, and over bare (over forwarding for the counting rows)"
	echo
	printf '| mode |'
	for a in "${ALLOCS[@]}"; do printf ' %s |' "$a"; done
	printf '\n|---|'
	for a in "${ALLOCS[@]}"; do printf -- '---|'; done
	printf '\n'
	for m in "${MODES[@]}"; do
		printf '| %s |' "${LABEL[$m]}"
		for a in "${ALLOCS[@]}"; do
			awk -v s="${SLOPE[$a/$m]}" -v b="${SLOPE[$a/${REF[$m]:-bare}]}" -v f="${SLOPE[$a/fwd]:-}" \
				-v m="$m" -v r="${REF[$m]:-bare}" 'BEGIN {
				if (m == r) { printf " %.1f |", s; exit }
				printf " %.1f (%+.1f", s, s - b
				if ((m == "count" || m == "ocount") && f != "")
					printf "; %+.1f over forwarding", s - f
				printf ") |" }'
		done
		printf '\n'
	done
	if [ ${#TREE_MODES[@]} -gt 1 ]; then
		echo
		echo "The deep-stack parser (tree_bench.c, $TREE_STEPS -> $((2 * TREE_STEPS)) steps), glibc: a step's instructions, and over bare"
		echo
		echo "| mode | glibc |"
		echo "|---|---|"
		for m in "${TREE_MODES[@]}"; do
			awk -v l="${LABEL[$m]}" -v s="${SLOPE[tree/$m]}" -v b="${SLOPE[tree/bare]}" -v m="$m" 'BEGIN {
				if (m == "bare") printf "| %s | %.1f |\n", l, s
				else printf "| %s | %.1f (%+.1f) |\n", l, s, s - b }'
		done
	fi
} >"$BUILD/bench/instr.md"
cat "$BUILD/bench/instr.md"
