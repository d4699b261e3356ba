#!/usr/bin/env bash
# parts.sh - where a tree_bench step goes, function by function: the
# deep-stack parser's cost split by component (make bench-parts).
#
#   bench/parts.sh BUILD_DIR
#
# Each mode runs tree_bench under callgrind with its cache and branch
# models (--cache-sim=yes --branch-sim=yes) at two lengths, PARTS_STEPS
# and twice that; each function's own instructions, first- and
# last-level read misses, write misses and mispredicted conditional
# branches, over the difference of the blocks the two runs allocated,
# are a block's: start-up, exit and the first pass (which stores the
# parser's ~89,500 stacks within ~770,000 blocks) cancel.  Modes: bare,
# memcheck without stacks (MEMCHECK_STACK_DEPTH=0), with them (the
# defaults), the floor preload (floor_interpose.c, walk + table) and,
# with BENCH_OTHER=FILE, the other library's defaults.  The models are
# callgrind's (no hardware counters on these guests): the last level
# PARTS_LL, by default 2 MiB 16-way, a core's L2 here; its mispredicts
# are a two-bit counter's a branch, which misses a short loop's exit
# that a real predictor learns (doc/costs.md, tree57).  memcheck does
# not scrub under valgrind (MEMCHECK_SCRUB): the scrub is not counted.
#
# Environment: PARTS_STEPS (1000000), PARTS_LL (2097152,16,64), PARTS_D1
# (32768,8,64), BENCH_MODES (a regex over bare track fp floor other:
# only those; bare always), PARTS_MIN (a function is listed where it
# takes this many instructions a block, or 0.01 of any miss: 0.5),
# BENCH_OTHER.  Prints Markdown and writes BUILD_DIR/bench/parts.md.
# Exits non-zero when a run fails or prints another checksum than the
# bare run.  Needs valgrind (make deps).  Two runs at a time: ~10
# minutes for bare and two libraries at load 28 (2026-12-07).
set -u
export LC_ALL=C

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
STEPS=${PARTS_STEPS:-1000000}
LL=${PARTS_LL:-2097152,16,64}
D1=${PARTS_D1:-32768,8,64}
MIN=${PARTS_MIN:-0.5}
OTHER=${BENCH_OTHER:-}
TREE_BIN=$BUILD/bench/tree_bench
FLOOR_LIB=$BUILD/bench/libfloor_interpose.so
EVENTS=Ir,D1mr,DLmr,D1mw,DLmw,Bcm

{ command -v valgrind && command -v callgrind_annotate; } >/dev/null ||
	{ echo "parts.sh: no valgrind (make deps)" >&2; exit 2; }
for f in "$TREE_BIN" "$FLOOR_LIB"; do
	[ -e "$f" ] || { echo "parts.sh: $f not built" >&2; exit 2; }
done
[ "$STEPS" -ge 10000 ] 2>/dev/null || { echo "parts.sh: PARTS_STEPS must be a number >= 10000" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-parts.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/common.sh"

MODES=(bare track fp floor)
[ -n "$OTHER" ] && MODES+=(other)
declare -A PRE=([bare]='' [track]=$MC [fp]=$MC [floor]=$FLOOR_LIB [other]=${OTHER_MC:-})
declare -A ENV=([track]=MEMCHECK_STACK_DEPTH=0)
declare -A LABEL=([bare]="bare" [track]="memcheck, no stacks (DEPTH=0)"
	[fp]="memcheck, defaults" [floor]="floor preload: walk + table"
	[other]="BENCH_OTHER's, defaults")
if [ -n "${BENCH_MODES:-}" ]; then
	kept=(bare)
	for m in "${MODES[@]}"; do
		[ "$m" != bare ] && [[ $m =~ $BENCH_MODES ]] && kept+=("$m")
	done
	MODES=("${kept[@]}")
fi

run() { # mode steps: callgrind's output in $TMP/cg.MODE.STEPS, the program's line in out.MODE.STEPS
	local m=$1 n=$2 pre=${PRE[$1]}
	# shellcheck disable=SC2086 # ENV is a word list
	env ${pre:+LD_PRELOAD="$pre"} MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0 \
		${ENV[$m]:-} valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
		--D1="$D1" --LL="$LL" --callgrind-out-file="$TMP/cg.$m.$n" \
		"$TREE_BIN" "$n" >"$TMP/out.$m.$n" 2>"$TMP/err.$m.$n"
}

# Each function's own costs (the events in EVENTS' order, then its name)
# from one run, one line a function.
own() {
	callgrind_annotate --auto=no --inclusive=no --threshold=100 --show=$EVENTS "$1" |
		awk -v nev=6 '(done || /PROGRAM TOTALS/) && NF {
			gsub(/\([^)]*\)/, ""); n = split($0, f, " ")
			if (n <= nev) next
			line = ""; for (i = 1; i <= nev; i++) { gsub(/,/, "", f[i]); line = line f[i] " " }
			name = f[nev + 1]; for (i = nev + 2; i <= n; i++) name = name " " f[i]
			if (name != "PROGRAM TOTALS") sub(/^[^:]*:/, "", name)
			print line name; next }
			/file:function/ { getline; done = 1 }'
}

declare -A SUM BLOCKS
for m in "${MODES[@]}"; do
	run "$m" "$STEPS" & p1=$!
	run "$m" $((2 * STEPS)) & p2=$!
	wait $p1 || { echo "parts.sh: $m ($STEPS steps) failed:" >&2; tail -n 5 "$TMP/err.$m.$STEPS" >&2; exit 1; }
	wait $p2 || { echo "parts.sh: $m ($((2 * STEPS)) steps) failed:" >&2; tail -n 5 "$TMP/err.$m.$((2 * STEPS))" >&2; exit 1; }
	for n in "$STEPS" $((2 * STEPS)); do
		sum=$(sed -n 's/.* checksum=\([^ ]*\) .*/\1/p' "$TMP/out.$m.$n")
		blocks=$(sed -n 's/.* blocks=\([^ ]*\) .*/\1/p' "$TMP/out.$m.$n")
		if [ "$m" = bare ]; then
			SUM[$n]=$sum
			BLOCKS[$n]=$blocks
		elif [ "$sum" != "${SUM[$n]}" ]; then
			echo "parts.sh: $m printed checksum '$sum', the bare run '${SUM[$n]}': the program changed" >&2
			exit 1
		fi
		own "$TMP/cg.$m.$n" >"$TMP/own.$m.$n"
	done
done
d=$((BLOCKS[$((2 * STEPS))] - BLOCKS[$STEPS]))

# slope MODE: each function's "name|Ir|D1mr|..." a block, PROGRAM TOTALS first
slope() {
	awk -v d="$d" 'FNR == 1 { file++ }
		{ name = $7; for (i = 8; i <= NF; i++) name = name " " $i
		  names[name] = 1; for (i = 1; i <= 6; i++) v[file, name, i] += $i }
		END { for (name in names) {
			line = name; for (i = 1; i <= 6; i++) line = line "|" (v[2, name, i] - v[1, name, i]) / d
			print line } }' "$TMP/own.$1.$STEPS" "$TMP/own.$1.$((2 * STEPS))" |
		sort -t'|' -k2,2gr
}

{
	echo "## Where a tree_bench block goes (glibc; callgrind, D1 $D1, last level $LL)"
	echo
	echo "A block: the slope between $STEPS and $((2 * STEPS)) steps ($d blocks); the first pass, which"
	echo "stores the parser's stacks, ends within ~770,000 blocks (below that the slope holds part of it)."
	echo "Mispredicts are callgrind's two-bit model's (conditional branches)."
	echo
	echo "| mode | instructions | D1 read misses | LL read misses | D1 write misses | LL write misses | mispredicts |"
	echo "|---|---|---|---|---|---|---|"
	for m in "${MODES[@]}"; do
		slope "$m" | awk -F'|' -v l="${LABEL[$m]}" '$1 == "PROGRAM TOTALS" {
			printf "| %s | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", l, $2, $3, $4, $5, $6, $7 }'
	done
	for m in "${MODES[@]}"; do
		[ "$m" = bare ] && continue
		echo
		echo "### ${LABEL[$m]}: each function's own, a block"
		echo
		echo "| function | instructions | D1 read | LL read | D1 write | LL write | mispredicts |"
		echo "|---|---|---|---|---|---|---|"
		slope "$m" | awk -F'|' -v min="$MIN" '$1 != "PROGRAM TOTALS" {
			keep = ($2 >= min || $2 <= -min)
			for (i = 3; i <= 7; i++) if ($i >= 0.01 || $i <= -0.01) keep = 1
			if (keep) printf "| `%s` | %.1f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", $1, $2, $3, $4, $5, $6, $7 }'
	done
} | tee "$BUILD/bench/parts.md"
