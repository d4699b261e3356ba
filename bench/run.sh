#!/usr/bin/env bash
# run.sh - measure what memcheck costs on top of each allocator.
#
#   bench/run.sh BUILD_DIR        (make bench runs it)
#
# Environment: BENCH_ITERS (steps of the full-length runs), BENCH_RUNS
# (runs per mode), BENCH_THREADS (threads of the threaded variant, 0: none),
# VALGRIND=1 (also time valgrind --tool=memcheck), BENCH_MODES (a regex:
# only those modes, and the bare runs), BENCH_OTHER=FILE (another
# libmemcheck.so, main's say: its stack modes and its counting timed in the
# same rounds, for a before and after side by side).
#
# Modes, each against the bare run of the same allocator: an interposer
# that only forwards (the floor of counting), the floor preload
# (floor_interpose.c: the least a tracker of memcheck's kind does a
# block, a frame-pointer walk hashed and a table of live blocks; on the
# loop, the tree and the threads), memcheck counting, tracking without and
# with stacks (and with stacks but without the peak snapshot's per-site
# counts, or with a timeline; fp; under glibc also 16-deep stacks, libunwind and glibc
# backtrace(3), the slow ones on fewer steps), LeakSanitizer, valgrind, a
# threaded variant, the loop again writing each new block in full
# (fill: a program that uses what it allocates), and again taking each new
# block from the C library's strndup (libc: stacks through code without
# frame pointers, unwound by its call-frame information).  Then the memory each
# tracked block costs.  Every row and the figures bench/targets names go to
# BUILD_DIR/bench/malloc.tsv, which bench/chart.sh turns into the one table
# and chart of make bench (bench.md, bench.svg).
#
# The machine is shared and noisy, so every mode of every allocator runs
# once per round, round-robin (each round's order shuffled),
# BENCH_RUNS rounds, and the table shows medians: a slow spell then costs
# every mode alike instead of one.
# Wall time is the whole process (start-up and memcheck's exit report
# included), taken with bash's $EPOCHREALTIME: no fork for the clock.
#
# A measurement, not a test: missed targets show as MISS in chart.sh's
# table, and the script still exits 0.  It exits non-zero only when a run fails or gives
# a different checksum than the bare run (memcheck changed the program).
# The tree rows (tree_bench.c, a parser) weigh deep stacks from many call
# paths; their targets: tracking with stacks <= 1.4x and below
# LeakSanitizer.
set -u
export LC_ALL=C # $EPOCHREALTIME and awk with a '.' decimal point

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
ITERS=${BENCH_ITERS:-40000000}
RUNS=${BENCH_RUNS:-5}
THREADS=${BENCH_THREADS:-4}
VALGRIND=${VALGRIND:-0}
OTHER=${BENCH_OTHER:-}
KEEP=1000000            # live blocks of the memory-per-block runs
DIV_UNW=10              # libunwind runs take 1/DIV_UNW of the steps
DIV_BT=100              # glibc backtrace(3) runs: 1/DIV_BT
DIV_VG=50               # valgrind runs: 1/DIV_VG
DIV_TREE=8              # tree_bench runs: 1/DIV_TREE (5 M blocks, ~0.4 s bare)

BIN=$BUILD/bench/malloc_bench
LSAN_BIN=$BUILD/bench/malloc_bench_lsan
TREE_BIN=$BUILD/bench/tree_bench
TREE_LSAN_BIN=$BUILD/bench/tree_bench_lsan
NULL_LIB=$BUILD/bench/libnull_interpose.so
FLOOR_LIB=$BUILD/bench/libfloor_interpose.so
LIBDIR=/usr/lib/x86_64-linux-gnu

[ -x "$BIN" ] || { echo "run.sh: $BIN not built" >&2; exit 2; }
[ -e "$BUILD/libmemcheck.so" ] || { echo "run.sh: $BUILD/libmemcheck.so not built" >&2; exit 2; }
[ "$RUNS" -ge 1 ] 2>/dev/null || { echo "run.sh: BENCH_RUNS must be >= 1" >&2; exit 2; }
[ "$ITERS" -ge "$DIV_BT" ] 2>/dev/null || { echo "run.sh: BENCH_ITERS must be >= $DIV_BT" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-bench.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

# The library copied, the environment cleaned, clock(): bench/common.sh.
. "$(dirname "$0")/common.sh"
# The bench times, it does not judge: with MEMCHECK_STACK_DEPTH=0 no
# suppression can match, and tcmalloc's own 8-byte block would make the
# exit status 23.
export MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0

# ---- what runs ---------------------------------------------------------

# The allocators memcheck runs by default: bench/common.sh.
declare -A ALLOC_LIB
read_allocators
[ -n "${ALLOC_LIB[glibc]+set}" ] || { echo "run.sh: lib/allocators.def has no default allocator glibc" >&2; exit 2; }

# A mode: label | preloaded in front of the allocator (0 nothing, 1 memcheck,
# 2 the forwarding-only interposer, 3 BENCH_OTHER, 4 the floor preload) | divisor of ITERS | environment
# (space-separated VAR=value) | extra arguments | allocators (all|glibc).
# bareN is the bare run at 1/N of the steps, the reference of modes that
# run shorter.
declare -A M_LABEL M_MC M_DIV M_ENV M_ARGS M_WHERE
MODES=()
mode() {
	MODES+=("$1")
	M_LABEL[$1]=$2 M_MC[$1]=$3 M_DIV[$1]=$4 M_ENV[$1]=$5 M_ARGS[$1]=$6 M_WHERE[$1]=$7
}
mode bare  "bare"                              0 1 ""                     "" all
if [ -e "$NULL_LIB" ]; then
	mode fwd "forwarding only (null_interpose.c)" 2 1 "" "" all
fi
# What any tracker that walks 16 frames and keeps a table of live blocks
# pays (session 32, deep32): bench/targets sets memcheck's added time
# against it, measured in the same rounds so that the load cancels.
if [ -e "$FLOOR_LIB" ]; then
	mode floor "floor preload: 16-frame walk + table" 4 1 "" "" all
	# The same floor scrubbing the bytes memcheck's default scrub reads
	# (FLOOR_SCRUB, lib/options.def's MEMCHECK_SCRUB default): the scrub
	# is the scan's fidelity (valgrind's definite counts only from 4,096
	# bytes, session 25), which the plain floor does not model, and the
	# whole of memcheck's step beyond it (session 35, step35).  The
	# proposed target weighs memcheck against this one (session 36).
	SCRUB_DEFAULT=$(sed -n 's/^MC_OPT(SCRUB, scrub, INT, "\([0-9]*\)".*/\1/p' \
		"$(dirname "$0")/../lib/options.def")
	[ -n "$SCRUB_DEFAULT" ] || { echo "run.sh: lib/options.def has no MEMCHECK_SCRUB default" >&2; exit 2; }
	mode fscrub "floor preload + scrub of $SCRUB_DEFAULT B" 4 1 "FLOOR_SCRUB=$SCRUB_DEFAULT" "" all
fi
mode count "counting (TRACK=0)"                1 1 "MEMCHECK_TRACK=0"     "" all
mode track "tracking, no stacks (DEPTH=0)"     1 1 "MEMCHECK_STACK_DEPTH=0" "" all
mode fp    "tracking + stacks, fp (default)"   1 1 "MEMCHECK_UNWINDER=fp" "" all
# Each stack's live bytes and blocks for the peak snapshot (snapshot.c)
# are kept only where a report can show them (a JSON report, the full
# text, a budget): the same with a JSON report, and with a timeline.
mode site "the same, with a JSON report (peak sites kept)" 1 1 "MEMCHECK_UNWINDER=fp MEMCHECK_REPORT=/dev/null" "" all
mode tline "the same, timeline (TIMELINE=512)"  1 1 "MEMCHECK_UNWINDER=fp MEMCHECK_TIMELINE=512" "" glibc
# Test suites allocate 10-20 frames down (runner, test, code under test):
# the loop run 16 calls deeper, so the fp walk and the stack hash see
# full-depth (MEMCHECK_STACK_DEPTH=16) stacks.  Costs nothing per step bare.
mode fpdeep "tracking + stacks, fp, 16-deep stacks" 1 1 "MEMCHECK_UNWINDER=fp" "--depth 16" glibc
# The same churn with each new block from strndup, inside the C library,
# which has no frame pointers: the fp unwinder's stacks go on through it
# by its call-frame information (lib/cfi.c), the slow path of a capture.
mode lbare  "libc: bare"                       0 1 ""                     "--libc 1" glibc
mode ltrack "libc: tracking, no stacks (DEPTH=0)" 1 1 "MEMCHECK_STACK_DEPTH=0" "--libc 1" glibc
mode lfp    "libc: tracking + stacks, fp"      1 1 "MEMCHECK_UNWINDER=fp" "--libc 1" glibc
mode barel$DIV_UNW "libc: bare, 1/$DIV_UNW steps" 0 $DIV_UNW "" "--libc 1" glibc
mode lunw   "libc: tracking + stacks, libunwind" 1 $DIV_UNW "MEMCHECK_UNWINDER=libunwind" "--libc 1" glibc
# BENCH_OTHER's library on the stack modes (3: preload it instead).
if [ -n "$OTHER" ]; then
	# under every allocator: the other library's one-thread ratio, over
	# which its threads' ratio (otfp) is taken
	mode ofp     "other: tracking + stacks, fp"     3 1 "MEMCHECK_UNWINDER=fp" "" all
	# and its counting, under every allocator: what a change to the
	# count-only paths buys is a fraction of a nanosecond a step, which
	# only the two libraries' difference within each round shows
	# (count:ocount below; session 50, count50)
	mode ocount  "other: counting (TRACK=0)"        3 1 "MEMCHECK_TRACK=0" "" all
	mode ofpdeep "other: fp, 16-deep stacks"        3 1 "MEMCHECK_UNWINDER=fp" "--depth 16" glibc
	mode olfp    "other: libc: tracking + stacks, fp" 3 1 "MEMCHECK_UNWINDER=fp" "--libc 1" glibc
fi
mode bare$DIV_UNW "bare, 1/$DIV_UNW steps"     0 $DIV_UNW "" "" glibc
mode unw   "tracking + stacks, libunwind"      1 $DIV_UNW "MEMCHECK_UNWINDER=libunwind" "" glibc
mode bare$DIV_BT "bare, 1/$DIV_BT steps"       0 $DIV_BT "" "" glibc
mode bt    "tracking + stacks, glibc backtrace" 1 $DIV_BT "MEMCHECK_UNWINDER=glibc" "" glibc
if [ -x "$LSAN_BIN" ]; then
	mode lsan "LeakSanitizer (-fsanitize=leak)" 0 1 "" "" glibc
fi
# A parser (tree_bench.c): recursive descent, trees of small nodes and
# strings built and freed, allocations 4..44 frames down from 90,000
# call paths, where the loop above has one: every capture is a full
# 16-frame walk, and its stack has left the thread's cache since last
# seen.  1/DIV_TREE of the steps (a step: a block allocated and freed).
if [ -x "$TREE_BIN" ]; then
	mode pbare  "tree: bare"                       0 $DIV_TREE "" "" glibc
	mode ptrack "tree: tracking, no stacks (DEPTH=0)" 1 $DIV_TREE "MEMCHECK_STACK_DEPTH=0" "" glibc
	mode pfp    "tree: tracking + stacks (defaults)" 1 $DIV_TREE "" "" glibc
	mode psite "tree: the same, with a JSON report" 1 $DIV_TREE "MEMCHECK_REPORT=/dev/null" "" glibc
	if [ -e "$FLOOR_LIB" ]; then
		mode pfloor "tree: floor preload, walk + table" 4 $DIV_TREE "" "" glibc
		mode pfwalk "tree: floor preload, walk only" 4 $DIV_TREE "FLOOR_TABLE=0" "" glibc
		# and interning its stacks (FLOOR_DEPOT=1: a hash table looked
		# up where its cache misses, a new stack's frames stored once),
		# as any tool that reports a leak's stack must: the plain floor
		# names a stack by its hash and stores nothing, and on this
		# workload the first pass stores ~90,000 stacks
		mode pfdepot "tree: floor preload, walk + table + depot" 4 $DIV_TREE "FLOOR_DEPOT=1" "" glibc
	fi
	[ -n "$OTHER" ] && mode ofptree "other: tree: tracking + stacks" 3 $DIV_TREE "" "" glibc
	[ -x "$TREE_LSAN_BIN" ] && mode plsan "tree: LeakSanitizer" 0 $DIV_TREE "" "" glibc
fi
# The same churn, but each new block is written in full, as a program
# that allocates memory to use it would: the malloc-bound loop above is
# the worst case, this one a heavy but less one-sided program.
mode fbare  "fill: bare"                        0 1 ""                     "--fill 1" glibc
mode fcount "fill: counting (TRACK=0)"          1 1 "MEMCHECK_TRACK=0"     "--fill 1" glibc
mode ffp    "fill: tracking + stacks, fp"       1 1 "MEMCHECK_UNWINDER=fp" "--fill 1" glibc
if [ -x "$LSAN_BIN" ]; then
	mode flsan "fill: LeakSanitizer"            0 1 "" "--fill 1" glibc
fi
if [ "$VALGRIND" = 1 ] && ! command -v valgrind >/dev/null; then
	echo "VALGRIND=1 but no valgrind installed (make deps): left out"
elif [ "$VALGRIND" = 1 ]; then
	[ "$DIV_VG" = "$DIV_UNW" ] || [ "$DIV_VG" = "$DIV_BT" ] ||
		mode bare$DIV_VG "bare, 1/$DIV_VG steps" 0 $DIV_VG "" "" glibc
	mode vg "valgrind --tool=memcheck"         0 $DIV_VG "" "" glibc
fi
if [ "$THREADS" -gt 1 ] 2>/dev/null; then
	mode tbare  "$THREADS threads: bare"                0 1 "" "--threads $THREADS" all
	mode tcount "$THREADS threads: counting (TRACK=0)"  1 1 "MEMCHECK_TRACK=0" "--threads $THREADS" all
	mode tfp    "$THREADS threads: tracking + stacks, fp" 1 1 "MEMCHECK_UNWINDER=fp" "--threads $THREADS" all
	mode tsite "$THREADS threads: the same, with a JSON report" 1 1 "MEMCHECK_UNWINDER=fp MEMCHECK_REPORT=/dev/null" "--threads $THREADS" all
	[ -e "$FLOOR_LIB" ] && mode tfloor "$THREADS threads: floor preload" 4 1 "" "--threads $THREADS" all
	# and scrubbing as memcheck's defaults do: the threads' proposed
	# target weighs memcheck against this one, as the step's (fscrub)
	[ -e "$FLOOR_LIB" ] && mode tfscrub "$THREADS threads: floor preload + scrub" 4 1 \
		"FLOOR_SCRUB=$SCRUB_DEFAULT" "--threads $THREADS" all
	[ -n "$OTHER" ] && mode otfp "other: $THREADS threads: tracking + stacks" 3 1 "MEMCHECK_UNWINDER=fp" "--threads $THREADS" all
fi

# BENCH_MODES=REGEX: only the modes whose names match it (and the bare
# runs, bare, tbare, pbare...), for a focused before/after: BENCH_MODES='p.*'
# the tree rows.
if [ -n "${BENCH_MODES:-}" ]; then
	kept=()
	for m in "${MODES[@]}"; do
		[[ $m =~ ^($BENCH_MODES)$ || $m =~ bare ]] && kept+=("$m") # the references too
	done
	MODES=("${kept[@]}")
fi

# The reference run of a mode: the bare run with the same steps and threads.
ref_of() {
	case $1 in
	unw) echo bare$DIV_UNW ;;
	lunw) echo barel$DIV_UNW ;;
	bt) echo bare$DIV_BT ;;
	vg) echo bare$DIV_VG ;;
	tbare | tcount | tfp | tsite | otfp | tfloor | tfscrub) echo tbare ;;
	fbare | fcount | ffp | flsan) echo fbare ;;
	pbare | ptrack | pfp | psite | ofptree | plsan | pfloor | pfwalk | pfdepot) echo pbare ;;
	lbare | ltrack | lfp | olfp) echo lbare ;;
	bare*) echo "$1" ;;
	*) echo bare ;;
	esac
}

runs_here() { # mode alloc
	[ "${M_WHERE[$1]}" = all ] || [ "$2" = glibc ]
}

# Run one mode under one allocator once: the program's output line goes to
# $TMP/out, the wall seconds to T, its CPU seconds (user + system) to C.
run_one() { # mode alloc [iters]
	local m=$1 a=$2 iters=${3:-$((ITERS / ${M_DIV[$1]}))}
	local lib=${ALLOC_LIB[$a]} bin=$BIN pre cmd=()
	case ${M_MC[$m]} in
	1) pre="$MC${lib:+ $lib}" ;;
	2) pre="$NULL_LIB${lib:+ $lib}" ;;
	3) pre="$OTHER_MC${lib:+ $lib}" ;;
	4) pre="$FLOOR_LIB${lib:+ $lib}" ;;
	*) pre=$lib ;;
	esac
	[ "$m" = lsan ] || [ "$m" = flsan ] && bin=$LSAN_BIN
	case $m in p* | ofptree) bin=$TREE_BIN ;; esac
	[ "$m" = plsan ] && bin=$TREE_LSAN_BIN
	[ "$m" = vg ] && cmd=(valgrind -q --tool=memcheck --error-exitcode=99)
	local t0 c0 rc
	children_cpu
	c0=$REPLY
	clock
	t0=$REPLY
	# shellcheck disable=SC2086 # M_ENV and M_ARGS are word lists
	env ${pre:+LD_PRELOAD="$pre"} ${M_ENV[$m]} "${cmd[@]}" "$bin" "$iters" ${M_ARGS[$m]} \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	clock
	local t1=$REPLY
	children_cpu
	C=$(((REPLY - c0) / 1000)).$(printf %03d $(((REPLY - c0) % 1000)))
	if [ $rc -ne 0 ]; then
		echo "run.sh: $a/$m failed (exit $rc):" >&2
		cat "$TMP/err" >&2
		return 1
	fi
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }')
}

field() { # name: a field of the program's output line
	local line
	read -r line <"$TMP/out"
	[[ " $line " =~ \ $1=([^ ]*)\  ]] && echo "${BASH_REMATCH[1]}"
}

# ---- is memcheck really there? ----------------------------------------
# One short untimed run per allocator with a JSON report: with the wrong
# preload order memcheck would be bypassed and every mode would look free.
echo "memcheck bench: $(basename "$BIN"), $ITERS steps (ring of 1024 blocks, 16..512 B, 1 step in 16 a realloc), $RUNS interleaved runs per mode"
NCPU=$(nproc)
echo "library: $(readlink -f "$BUILD/libmemcheck.so") (md5 $(md5sum <"$MC" | cut -c1-12)), $NCPU CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$OTHER" ] && echo "other library (BENCH_OTHER): $(readlink -f "$OTHER") (md5 $(md5sum <"$OTHER_MC" | cut -c1-12))"
for a in "${ALLOCS[@]}"; do
	lib=${ALLOC_LIB[$a]}
	env LD_PRELOAD="$MC${lib:+ $lib}" MEMCHECK_REPORT="$TMP/check.jsonl" "$BIN" 10000 \
		>/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
	line=$(tail -n 1 "$TMP/check.jsonl" 2>/dev/null)
	allocs='' seen=''
	[[ $line =~ \"allocs\":([0-9]+) ]] && allocs=${BASH_REMATCH[1]}
	[[ $line =~ \"allocator\":\"([^\"]*)\" ]] && seen=${BASH_REMATCH[1]}
	if [ "${allocs:-0}" -lt 10000 ]; then
		echo "run.sh: memcheck counted ${allocs:-nothing} allocations under $a: not active" >&2
		exit 1
	fi
	echo "  $a: memcheck active, allocator reported as '$seen', $allocs allocations counted in a 10000-step run"
	# the floor too: in front of the allocator, or it would time as bare
	if [ -e "$FLOOR_LIB" ]; then
		env LD_PRELOAD="$FLOOR_LIB${lib:+ $lib}" FLOOR_CHECK=1 "$BIN" 10000 >/dev/null 2>"$TMP/err" ||
			{ cat "$TMP/err" >&2; exit 1; }
		peak=$(sed -n 's/^floor_interpose: peak \([0-9]*\) bytes$/\1/p' "$TMP/err")
		if [ "${peak:-0}" -lt 16384 ]; then # the ring of 1024 blocks of 16..512 B
			echo "run.sh: the floor preload saw a peak of ${peak:-nothing} bytes under $a: not active" >&2
			exit 1
		fi
		echo "  $a: floor preload active, peak of $peak live bytes seen"
	fi
done

# ---- the timed rounds ---------------------------------------------------

declare -A SUM # alloc/mode -> checksum, to compare with the bare run
clock
total_s=$REPLY
# Each round runs an allocator's modes in an order of its own (shuffled,
# seeded by the round: the same orders every run), so that no mode
# always runs first, last, or right after the same mode.  In the order
# fixed, BENCH_OTHER's tree row ran after this library's, which ran
# after the bare one; the same library given as both read 12.8 to 314
# ns a step slower as this one than as the other, in all of five runs
# at load 15-35 (2026-12-07, tree50: three with the order fixed, two
# with it turned by one a round, which keeps each mode after the same
# one), where callgrind counts the same instructions for both.
for ((r = 1; r <= RUNS; r++)); do
	printf '  round %d/%d ...' "$r" "$RUNS"
	for a in "${ALLOCS[@]}"; do
		here=()
		for m in "${MODES[@]}"; do
			runs_here "$m" "$a" && here+=("$m")
		done
		RANDOM=$r
		for ((k = ${#here[@]} - 1; k > 0; k--)); do # Fisher-Yates
			j=$((RANDOM % (k + 1)))
			m=${here[k]} here[k]=${here[j]} here[j]=$m
		done
		for m in "${here[@]}"; do
			run_one "$m" "$a" || exit 1
			SUM[$a/$m]=$(field checksum)
			echo "$a $m $T $C" >>"$TMP/times"
		done
	done
	clock
	printf ' %.0f s\n' "$(awk -v a="$total_s" -v b="$REPLY" 'BEGIN { print b - a }')"
done

# The same steps must give the same checksum with and without memcheck.
# LeakSanitizer and valgrind run another binary or the same one in another
# machine, but the generator is the same: they must agree too.
for a in "${ALLOCS[@]}"; do
	for m in "${MODES[@]}"; do
		runs_here "$m" "$a" || continue
		ref=$(ref_of "$m")
		if [ "${SUM[$a/$m]}" != "${SUM[$a/$ref]}" ]; then
			echo "run.sh: $a/$m checksum ${SUM[$a/$m]} differs from $a/$ref ${SUM[$a/$ref]}" >&2
			exit 1
		fi
	done
done

# ---- memory per tracked block -------------------------------------------
# KEEP blocks of 16..64 B live at the end; the program reads its own VmHWM.
# bare vs tracking gives what memcheck costs per block all told (table,
# depot, counters); counting vs tracking leaves the fixed costs out.
: >"$TMP/keep"
for ((r = 1; r <= 3; r++)); do
	for a in "${ALLOCS[@]}"; do
		lib=${ALLOC_LIB[$a]}
		for m in bare count fp; do
			case $m in
			bare) pre=$lib; e= ;;
			count) pre="$MC${lib:+ $lib}"; e=MEMCHECK_TRACK=0 ;;
			fp) pre="$MC${lib:+ $lib}"; e=MEMCHECK_UNWINDER=fp ;;
			esac
			# shellcheck disable=SC2086
			env ${pre:+LD_PRELOAD="$pre"} $e "$BIN" --keep "$KEEP" >"$TMP/out" 2>"$TMP/err" ||
				{ cat "$TMP/err" >&2; exit 1; }
			echo "$a $m $(field vmhwm_kb)" >>"$TMP/keep"
		done
	done
done

# ---- memcheck's exit scan ---------------------------------------------------
# The same KEEP blocks left live at exit (--leave 1), a global pointing to
# them: the scan memcheck runs when the process ends reads every one.
# scan_seconds from the process record, median of 3.
: >"$TMP/scan"
for ((r = 1; r <= 3; r++)); do
	for a in "${ALLOCS[@]}"; do
		lib=${ALLOC_LIB[$a]}
		rm -f "$TMP/scan.jsonl"
		env LD_PRELOAD="$MC${lib:+ $lib}" MEMCHECK_REPORT="$TMP/scan.jsonl" \
			"$BIN" --keep "$KEEP" --leave 1 >"$TMP/out" 2>"$TMP/err" ||
			{ cat "$TMP/err" >&2; exit 1; }
		sed -n 's/.*"scan_seconds":\([0-9.]*\).*/'"$a"' \1/p' "$TMP/scan.jsonl" >>"$TMP/scan"
	done
done

# ---- the table ------------------------------------------------------------

# Median (and spread, max-min over median) of one mode's times.
stats() { # alloc mode -> "median spread%"
	awk -v a="$1" -v m="$2" '$1 == a && $2 == m { v[n++] = $3 }
		END {
			for (i = 1; i < n; i++) # insertion sort: n is small
				for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			med = (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2
			printf "%.6f %.0f\n", med, 100 * (v[n-1] - v[0]) / med
		}' "$TMP/times"
}

# For bench/chart.sh: the workload a mode belongs to, and what it is.
group_of() {
	case $1 in
	fbare | fcount | ffp | flsan) echo "malloc loop, every byte written" ;;
	lbare | ltrack | lfp | barel* | lunw | olfp) echo "malloc loop, blocks from strndup (libc)" ;;
	tbare | tcount | tfp | tsite | otfp | tfloor | tfscrub) echo "malloc loop, $THREADS threads" ;;
	pbare | ptrack | pfp | psite | ofptree | plsan | pfloor | pfwalk | pfdepot) echo "parser, deep stacks (tree_bench.c)" ;;
	*) echo "malloc loop" ;;
	esac
}
kind_of() {
	case $1 in
	bare* | fbare | lbare | tbare | pbare) echo bare ;;
	fp | ffp | lfp | tfp | pfp) echo mc ;;
	lsan | flsan | plsan) echo lsan ;;
	vg) echo vg ;;
	fwd | floor | fscrub | tfloor | tfscrub | pfloor | pfwalk | pfdepot) echo floor ;;
	ofp | ofpdeep | olfp | ofptree | otfp | ocount) echo other ;;
	*) echo mcmode ;;
	esac
}

TSV=$BUILD/bench/malloc.tsv
mkdir -p "$BUILD/bench"
{
	printf 'info\tmake bench %s: %s steps, medians of %s interleaved rounds, %s CPUs, load %s, library md5 %s\n' \
		"$(date -u +%Y-%m-%d)" "$ITERS" "$RUNS" "$NCPU" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(md5sum <"$MC" | cut -c1-12)"
	printf 'lib\t%s\n' "$(md5sum <"$MC" | cut -c1-12)"
} >"$TSV"

echo
printf '%-9s %-38s %9s %8s %9s %7s  %s\n' allocator mode "median s" ratio "+ns/step" spread note
declare -A RATIO NS
for a in "${ALLOCS[@]}"; do
	for m in "${MODES[@]}"; do
		runs_here "$m" "$a" || continue
		case $m in bare?*) continue ;; esac # shown through the modes they serve
		[ "$m" = fbare ] && echo "(fill: every byte of each new block written; ratios against fill: bare)" 
		[ "$m" = lbare ] && echo "(libc: each new block from strndup, in the C library, built without frame pointers; ratios against libc: bare)" 
		ref=$(ref_of "$m")
		div=${M_DIV[$m]}
		read -r med spread < <(stats "$a" "$m")
		read -r refmed _ < <(stats "$a" "$ref")
		steps=$((ITERS / div))
		note=
		[ "$div" -gt 1 ] && note="ran 1/$div of the steps; seconds x$div, ratio vs bare at 1/$div"
		case $m in
		lsan) note="same source, gcc -fsanitize=leak, no preload" ;;
		fwd) note="the floor of any interposer: forwards, counts nothing" ;;
		floor) note="floor_interpose.c: the least a tracker of memcheck's kind does a block" ;;
		fscrub) note="the same, scrubbing the bytes memcheck's default scrub reads" ;;
		fpdeep) note="loop run 16 frames down (--depth 16): stacks as deep as a suite's" ;;
		ofp | ofpdeep | olfp | ocount) note="BENCH_OTHER's library" ;;
		ofptree) note="BENCH_OTHER's library; tree_bench.c, seconds x$div" ;;
		pbare | ptrack | pfp | psite | plsan | pfloor | pfwalk | pfdepot) note="tree_bench.c: $steps blocks, seconds x$div" ;;
		vg) note="$note; valgrind's start-up (~0.3 s) included" ;;
		site) note="the per-site counts of the peak snapshot kept (a report reads them)" ;;
		tline) note="sampling live bytes, RSS, retained bytes" ;;
		tbare | tcount | tfp | tsite | otfp | tfloor | tfscrub) note="$((ITERS / THREADS)) steps per thread, $NCPU CPUs; ns per step of wall time" ;;
		esac
		awk -v a="$a" -v l="${M_LABEL[$m]}" -v t="$med" -v r="$refmed" -v d="$div" \
			-v n="$steps" -v sp="$spread" -v note="$note" -v bare="$([ "$m" = "$ref" ] && echo 1)" 'BEGIN {
				ns = bare ? "-" : sprintf("%+.1f", (t - r) / n * 1e9)
				printf "%-9s %-38s %9.3f %7.2fx %9s %6s%%  %s\n", a, l, t * d, t / r, ns, sp, note
			}'
		RATIO[$a/$m]=$(awk -v t="$med" -v r="$refmed" 'BEGIN { printf "%.10g", t / r }')
		NS[$a/$m]=$(awk -v t="$med" -v r="$refmed" -v n="$steps" 'BEGIN { printf "%.3f", (t - r) / n * 1e9 }')
		awk -v g="$(group_of "$m")" -v a="$a" -v l="${M_LABEL[$m]}" -v t="$med" -v r="$refmed" \
			-v d="$div" -v n="$steps" -v k="$(kind_of "$m")" 'BEGIN {
				printf "row\t%s\t%s\t%s\t%.3f\t%.4f\t%s\t%s\n", g, a, l, t * d, t / r,
					k == "bare" ? "-" : sprintf("%+.1f ns a step", (t - r) / n * 1e9), k
			}' >>"$TSV"
	done
done

# The threads' ratio over the one-thread ratio taken within each round
# (tfp/tbare over fp/bare, the four runs of one round minutes apart at
# most), then its median and quartiles: a slow spell of a shared machine
# (other processes on the two cores) then moves both ratios of a round
# alike.  This is the metric threads.rel; the ratio of the medians, its
# former figure, is shown beside it.  Why: the same code twice in the same
# 8 rounds (this branch's library and main's as BENCH_OTHER, which
# differ only in comments; 20 M steps, load 3.8-5.3, spreads of the
# wall times 33-139%) gave tcmalloc 1.396 and 1.106 as ratios of the
# medians, 1.134 [1.021-1.259] and 1.058 [0.980-1.128] per round; with
# BENCH_OTHER, the other library's in the same rounds.
if [[ " ${MODES[*]} " == *" tfp "*" fp "* || " ${MODES[*]} " == *" fp "*" tfp "* ]]; then
	echo
	echo "$THREADS threads over one, per round (tfp/tbare over fp/bare): median [quartiles] of $RUNS rounds"
	for a in "${ALLOCS[@]}"; do
		awk -v a="$a" -v out="$TMP/threl.$a" -v other="$([[ " ${MODES[*]} " == *" otfp "* ]] && echo 1)" \
			-v floor="$([[ " ${MODES[*]} " == *" tfloor "* ]] && echo 1)" '
			function med(v, n, q,   i, j, t) { # the q-quantile of v[0..n-1], sorted in place
				for (i = 1; i < n; i++)
					for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
				return v[int(q * (n - 1) + 0.5)]
			}
			$1 == a { r = ++seen[$2]; t[$2, r] = $3; if (r > n) n = r }
			function show(tag, f, tf,   i, k, v) {
				k = 0
				for (i = 1; i <= n; i++)
					if (t[f, i] && t["bare", i] && t[tf, i] && t["tbare", i])
						v[k++] = (t[tf, i] / t["tbare", i]) / (t[f, i] / t["bare", i])
				if (!k)
					return
				m = med(v, k, 0.5)
				printf "  %-9s %-6s %.3f [%.3f-%.3f]  (ratio of the medians %.3f)\n", a, tag, m,
					med(v, k, 0.25), med(v, k, 0.75), mr(tf, "tbare") / mr(f, "bare")
				if (tag == "this")
					printf "%.3f\n", m > out
				if (tag == "floor")
					printf "%.3f\n", m > (out ".floor")
			}
			function mr(m, b,   i, k, w, x) { # median of mode m over the median of b
				k = 0
				for (i = 1; i <= n; i++) if (t[m, i]) w[k++] = t[m, i]
				x = med(w, k, 0.5); k = 0
				for (i = 1; i <= n; i++) if (t[b, i]) w[k++] = t[b, i]
				return x / med(w, k, 0.5)
			}
			END { show("this", "fp", "tfp"); if (other) show("other", "ofp", "otfp")
				if (floor) show("floor", "floor", "tfloor") }' "$TMP/times"
	done
fi

# Counting's and forwarding's added time a step taken within each round
# (the mode's run minus the bare run of the same round), then its median
# and quartiles: the metrics count.ns and fwd.ns; and counting's over
# forwarding's, the same way (count.over.fwd): what counting adds to the
# call every malloc-family interposer makes; with BENCH_OTHER, the other
# library's counting too, and this library's over it (count:ocount).  A step's added
# nanosecond is 40 ms of a ~1 s run, less than one slow spell of a shared
# machine: as the difference of two medians it came out below the bare
# run (bench38, idle at the start: glibc counting -5.63 ns, the bare
# run's median 1.078 s against 0.777 s the run before), which no preload
# can be; the difference of medians is shown beside.
if [[ " ${MODES[*]} " == *" count "* ]]; then
	echo
	echo "counting and forwarding, added ns a step per round (the mode minus bare, same round): median [quartiles] of $RUNS rounds"
	for a in "${ALLOCS[@]}"; do
		for pair in count:bare fwd:bare count:fwd ocount:bare count:ocount; do
			m=${pair%:*} r=${pair#*:}
			[[ " ${MODES[*]} " == *" $m "* && " ${MODES[*]} bare " == *" $r "* ]] || continue
			out=$TMP/pair.$a.$m
			[ "$r" = bare ] || out=$TMP/pair.$a.$m.$r
			awk -v a="$a" -v m="$m" -v r="$r" -v n="$ITERS" -v out="$out" '
				function q(v, k, f,   i, j, t) { # the f-quantile of v[0..k-1], sorted in place
					for (i = 1; i < k; i++)
						for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
					return v[int(f * (k - 1) + 0.5)]
				}
				$1 == a && ($2 == m || $2 == r) { i = ++seen[$2]; t[$2, i] = $3 }
				END {
					k = 0
					for (i = 1; i <= seen[m]; i++)
						if ((m, i) in t && (r, i) in t)
							v[k++] = (t[m, i] - t[r, i]) / n * 1e9
					if (!k)
						exit
					md = q(v, k, 0.5)
					printf "  %-9s %-6s %+.2f [%+.2f..%+.2f]%s\n", a, m, md, q(v, k, 0.25), q(v, k, 0.75),
						r == "bare" ? "" : " over " r
					printf "%.3f\n", md > out
				}' "$TMP/times"
		done
	done
fi

# BENCH_OTHER's rows against this library's, within each round: the
# other library's added time (its run minus the round's bare run) over
# this one's, median [quartiles] and in how many rounds it was the
# smaller; by wall time and by the processes' CPU time (user + system,
# 10 ms ticks: at load the wall time is mostly waiting for a CPU).  A
# before and after of a few ns a step is less than the spread of either
# median over a loaded machine's rounds; the pair taken in one round
# moves less.
if [ -n "$OTHER" ]; then
	echo
	echo "BENCH_OTHER's added time over this library's, per round (mode minus bare, same round): median [quartiles], rounds below 1"
	for a in "${ALLOCS[@]}"; do
		for pair in fp:ofp fpdeep:ofpdeep lfp:olfp pfp:ofptree; do
			m=${pair%:*} o=${pair#*:} r=$(ref_of "${pair%:*}")
			[[ " ${MODES[*]} " == *" $m "* && " ${MODES[*]} " == *" $o "* ]] || continue
			if ! runs_here "$m" "$a" || ! runs_here "$o" "$a"; then
				continue
			fi
			awk -v a="$a" -v m="$m" -v o="$o" -v r="$r" '
				function q(v, k, f,   i, j, t) { # the f-quantile of v[0..k-1], sorted in place
					for (i = 1; i < k; i++)
						for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
					return v[int(f * (k - 1) + 0.5)]
				}
				function per_round(c,   i, k, below, v) { # c: 3 wall, 4 CPU
					k = 0; below = 0
					for (i = 1; i <= seen[m]; i++)
						if ((o, i) in t && (r, i) in t && t[m, i, c] > t[r, i, c]) {
							v[k] = (t[o, i, c] - t[r, i, c]) / (t[m, i, c] - t[r, i, c])
							below += v[k++] < 1
						}
					if (!k)
						return "-"
					return sprintf("%.3f [%.3f-%.3f], %d of %d below 1", q(v, k, 0.5),
						       q(v, k, 0.25), q(v, k, 0.75), below, k)
				}
				$1 == a && ($2 == m || $2 == o || $2 == r) {
					i = ++seen[$2]; t[$2, i]; t[$2, i, 3] = $3; t[$2, i, 4] = $4
				}
				END {
					if (seen[m])
						printf "  %-9s %-8s wall %s; CPU %s\n", a, o, per_round(3), per_round(4)
				}' "$TMP/times"
		done
	done
fi

echo "(the fp 16-deep, libunwind, glibc backtrace, LeakSanitizer and valgrind rows run under glibc"
echo " only: what they add does not depend on the allocator; +ns/step is the mode's time minus its"
echo " reference's, per malloc+free step)"

echo
echo "memory per tracked block: $KEEP blocks of 16..64 B live at the end, peak RSS (VmHWM) median of 3"
printf '%-9s %12s %12s %12s %16s %16s\n' allocator "bare kB" "counting kB" "tracking kB" "B/block vs bare" "B/block vs count"
for a in "${ALLOCS[@]}"; do
	awk -v a="$a" -v k="$KEEP" '$1 == a { v[$2, n[$2]++] = $3 }
		function med(m,   i, j, t, c, w) {
			c = n[m]
			for (i = 0; i < c; i++) w[i] = v[m, i]
			for (i = 1; i < c; i++)
				for (j = i; j > 0 && w[j-1] > w[j]; j--) { t = w[j]; w[j] = w[j-1]; w[j-1] = t }
			return w[int((c-1)/2)]
		}
		END {
			b = med("bare"); c = med("count"); f = med("fp")
			printf "%-9s %12d %12d %12d %16.1f %16.1f\n", a, b, c, f, (f - b) * 1024 / k, (f - c) * 1024 / k
			printf "metric\tblock.bytes\t%s\t%.1f\n", a, (f - b) * 1024 / k >> tsv
		}' tsv="$TSV" "$TMP/keep"
done

echo
echo "exit scan of $KEEP live blocks (--keep $KEEP --leave 1): scan_seconds, median of 3"
for a in "${ALLOCS[@]}"; do
	awk -v a="$a" '$1 == a { v[n++] = $2 }
		END {
			for (i = 1; i < n; i++) # insertion sort: n is 3
				for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			if (n) printf "%-9s %8.3f s\n", a, v[int((n-1)/2)]
		}' "$TMP/scan"
done

# Issue 15's targets (bench/targets), measured per allocator; chart.sh
# compares them with their limits.
for a in "${ALLOCS[@]}"; do
	{
		[ -n "${NS[$a/fp]:-}" ] && printf 'metric\tfp.ns\t%s\t%s\n' "$a" "${NS[$a/fp]}"
		# per round (above), else the difference of the medians
		if [ -s "$TMP/pair.$a.count" ]; then
			printf 'metric\tcount.ns\t%s\t%s\n' "$a" "$(cat "$TMP/pair.$a.count")"
		elif [ -n "${NS[$a/count]:-}" ]; then
			printf 'metric\tcount.ns\t%s\t%s\n' "$a" "${NS[$a/count]}"
		fi
		# the floors beside them (bench/targets' floor and proposed
		# lines): memcheck's added time over the floor preload's
		[ -s "$TMP/pair.$a.count.fwd" ] &&
			printf 'metric\tcount.over.fwd\t%s\t%s\n' "$a" "$(cat "$TMP/pair.$a.count.fwd")"
		if [ -s "$TMP/pair.$a.fwd" ]; then
			printf 'metric\tfwd.ns\t%s\t%s\n' "$a" "$(cat "$TMP/pair.$a.fwd")"
		elif [ -n "${NS[$a/fwd]:-}" ]; then
			printf 'metric\tfwd.ns\t%s\t%s\n' "$a" "${NS[$a/fwd]}"
		fi
		[ -n "${NS[$a/lsan]:-}" ] && printf 'metric\tlsan.ns\t%s\t%s\n' "$a" "${NS[$a/lsan]}"
		if [ -n "${NS[$a/floor]:-}" ]; then
			printf 'metric\tfloor.ns\t%s\t%s\n' "$a" "${NS[$a/floor]}"
			[ -n "${NS[$a/fp]:-}" ] && awk -v m="${NS[$a/fp]}" -v f="${NS[$a/floor]}" -v a="$a" \
				'BEGIN { if (f > 0) printf "metric\tfp.floor\t%s\t%.3f\n", a, m / f }'
		fi
		# and over the floor that scrubs as memcheck's defaults do: the
		# proposed target's (bench/targets)
		if [ -n "${NS[$a/fscrub]:-}" ]; then
			printf 'metric\tfloor.scrub.ns\t%s\t%s\n' "$a" "${NS[$a/fscrub]}"
			[ -n "${NS[$a/fp]:-}" ] && awk -v m="${NS[$a/fp]}" -v f="${NS[$a/fscrub]}" -v a="$a" \
				'BEGIN { if (f > 0) printf "metric\tfp.floor.scrub\t%s\t%.3f\n", a, m / f }'
		fi
		[ -s "$TMP/threl.$a.floor" ] &&
			printf 'metric\tfloor.threads.rel\t%s\t%s\n' "$a" "$(cat "$TMP/threl.$a.floor")"
		[ -n "${NS[$a/tfp]:-}" ] && [ -n "${NS[$a/tfloor]:-}" ] &&
			awk -v m="${NS[$a/tfp]}" -v f="${NS[$a/tfloor]}" -v a="$a" \
				'BEGIN { if (f > 0) printf "metric\tthreads.floor\t%s\t%.3f\n", a, m / f }'
		[ -n "${NS[$a/tfp]:-}" ] && [ -n "${NS[$a/tfscrub]:-}" ] &&
			awk -v m="${NS[$a/tfp]}" -v f="${NS[$a/tfscrub]}" -v a="$a" \
				'BEGIN { if (f > 0) printf "metric\tthreads.floor.scrub\t%s\t%.3f\n", a, m / f }'
		# per round (above), else the ratio of the medians
		if [ -s "$TMP/threl.$a" ]; then
			printf 'metric\tthreads.rel\t%s\t%s\n' "$a" "$(cat "$TMP/threl.$a")"
		elif [ -n "${RATIO[$a/tfp]:-}" ]; then
			awk -v t="${RATIO[$a/tfp]}" -v o="${RATIO[$a/fp]}" -v a="$a" \
				'BEGIN { printf "metric\tthreads.rel\t%s\t%.3f\n", a, t / o }'
		fi
		# the tree rows (glibc only)
		[ -n "${RATIO[$a/pfp]:-}" ] && printf 'metric\ttree.ratio\t%s\t%.3f\n' "$a" "${RATIO[$a/pfp]}"
		[ -n "${RATIO[$a/pfloor]:-}" ] &&
			printf 'metric\tfloor.tree.ratio\t%s\t%.3f\n' "$a" "${RATIO[$a/pfloor]}"
		[ -n "${RATIO[$a/pfwalk]:-}" ] &&
			printf 'metric\tfwalk.tree.ratio\t%s\t%.3f\n' "$a" "${RATIO[$a/pfwalk]}"
		[ -n "${RATIO[$a/pfdepot]:-}" ] &&
			printf 'metric\tfdepot.tree.ratio\t%s\t%.3f\n' "$a" "${RATIO[$a/pfdepot]}"
		[ -n "${RATIO[$a/pfp]:-}" ] && [ -n "${RATIO[$a/pfdepot]:-}" ] &&
			awk -v m="${RATIO[$a/pfp]}" -v f="${RATIO[$a/pfdepot]}" -v a="$a" \
				'BEGIN { if (f > 1) printf "metric\ttree.fdepot\t%s\t%.3f\n", a, (m - 1) / (f - 1) }'
		[ -n "${RATIO[$a/plsan]:-}" ] &&
			printf 'metric\tlsan.tree.ratio\t%s\t%.3f\n' "$a" "${RATIO[$a/plsan]}"
		[ -n "${RATIO[$a/pfp]:-}" ] && [ -n "${RATIO[$a/pfloor]:-}" ] &&
			awk -v m="${RATIO[$a/pfp]}" -v f="${RATIO[$a/pfloor]}" -v a="$a" \
				'BEGIN { if (f > 1) printf "metric\ttree.floor\t%s\t%.3f\n", a, (m - 1) / (f - 1) }'
		[ -n "${RATIO[$a/pfp]:-}" ] && [ -n "${RATIO[$a/plsan]:-}" ] &&
			awk -v t="${RATIO[$a/pfp]}" -v l="${RATIO[$a/plsan]}" -v a="$a" \
				'BEGIN { printf "metric\ttree.lsan\t%s\t%.3f\n", a, t / l }'
	} >>"$TSV"
done
clock
printf 'total %.0f s\n' "$(awk -v a="$total_s" -v b="$REPLY" 'BEGIN { print b - a }')"
exit 0
