#!/usr/bin/env bash
# suite.sh - what a whole test suite pays: hundreds of short processes run
# one after another, as a test driver runs them, bare and under memcheck.
#
#   bench/suite.sh BUILD_DIR        (make bench and make bench-suite run it)
#
# Environment: SUITE_PROCS (processes of the suite, default 300),
# DATE_PROCS (runs of /bin/date, default 200), BENCH_RUNS (rounds, default
# 5), BENCH_OTHER=FILE (another libmemcheck.so, main's say, timed in the
# same rounds: a before and after side by side).
#
# Workloads:
#   suite  build/bench/suite_test 0..N-1: each a test process that builds
#          and frees a small tree of strings and uses stdio; every 4th
#          sets the locale, every 3rd keeps strings in globals, every 5th
#          leaks a block (bench/suite_test.c).
#   date   /bin/date N times: a short program that leaves blocks behind
#          (and leaks one of its own), measured (MEMCHECK_PROGRAMS='*'),
#          and as memcheck leaves it by default, an installed tool run by
#          a test driver (forwarding only).
# Modes: bare; memcheck preloaded with its defaults (text on stderr, which
# goes to /dev/null); counting only (MEMCHECK_TRACK=0); the suite with a
# JSON report appended to one file, as `memcheck run` sets; BENCH_OTHER's
# library with its defaults; LeakSanitizer (the same source built with
# -fsanitize=leak, when the compiler has it); the floor preload
# (floor_interpose.c, when built: a 16-frame walk and a table of live
# blocks, no start-up or exit work), a short process's floor.
#
# The machine is shared and noisy: every mode runs once per round, round-
# robin, the order reversed every other round, and the table shows
# medians; ratios are against the bare run of the same round's workload.
# Each mode's CPU time (its processes' user and system time, as the
# shell's children) is kept beside its wall time: at load, wall time is
# mostly waiting for a CPU, and a mode's place in the round moved it
# (2026-12-06, short43: one library timed as this one and as BENCH_OTHER
# in the same rounds, the later rows +0.2 to +1.0 ms a process), where
# the CPU time of the same processes moved by tens of microseconds.  The processes' standard output must be the
# same in every mode (memcheck must not change what a test prints); their
# exit status is left alone (a leaking test fails under memcheck and
# LeakSanitizer, as it should).  The table is also written as Markdown to
# BUILD_DIR/bench/suite.md, and its rows and figures to suite.tsv for
# bench/chart.sh.
set -u
export LC_ALL=C # awk with a '.' decimal point; the tests get C.UTF-8

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
PROCS=${SUITE_PROCS:-300}
DATES=${DATE_PROCS:-200}
RUNS=${BENCH_RUNS:-5}
OTHER=${BENCH_OTHER:-}
BIN=$BUILD/bench/suite_test
LSAN_BIN=$BUILD/bench/suite_test_lsan
FLOOR_LIB=$BUILD/bench/libfloor_interpose.so
DATE=/bin/date
MD=$BUILD/bench/suite.md

[ -x "$BIN" ] || { echo "suite.sh: $BIN not built" >&2; exit 2; }
[ -e "$BUILD/libmemcheck.so" ] || { echo "suite.sh: $BUILD/libmemcheck.so not built" >&2; exit 2; }
[ "$RUNS" -ge 1 ] 2>/dev/null || { echo "suite.sh: BENCH_RUNS must be >= 1" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-suite.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

# The library copied, the environment cleaned, clock(): bench/common.sh.
. "$(dirname "$0")/common.sh"

# A mode: workload | label | preload | environment for each process.
declare -A M_WORK M_LABEL M_PRE M_ENV
MODES=()
mode() {
	MODES+=("$1")
	M_WORK[$1]=$2 M_LABEL[$1]=$3 M_PRE[$1]=$4 M_ENV[$1]=$5
}
mode s_bare  suite "bare" "" ""
mode s_mc    suite "memcheck, defaults" "$MC" ""
mode s_count suite "memcheck, counting only (TRACK=0)" "$MC" "MEMCHECK_TRACK=0"
# What `memcheck run` pays: every process it runs appends its JSON record
# to the report file it sets (MEMCHECK_REPORT).
mode s_json  suite "memcheck, JSON report (as memcheck run sets)" "$MC" "MEMCHECK_REPORT=$TMP/run.jsonl"
[ -n "$OTHER" ] && mode s_other suite "BENCH_OTHER's memcheck, defaults" "$OTHER_MC" ""
[ -n "$OTHER" ] && mode s_ojson suite "BENCH_OTHER's memcheck, JSON report" "$OTHER_MC" "MEMCHECK_REPORT=$TMP/run-other.jsonl"
[ -x "$LSAN_BIN" ] && mode s_lsan suite "LeakSanitizer (-fsanitize=leak)" "" ""
[ -e "$FLOOR_LIB" ] && mode s_floor suite "floor preload: 16-frame walk + table" "$FLOOR_LIB" ""
if [ -x "$DATE" ]; then
	mode d_bare date "bare" "" ""
	mode d_mc   date "memcheck, measured (PROGRAMS='*')" "$MC" "MEMCHECK_PROGRAMS=*"
	[ -n "$OTHER" ] && mode d_other date "BENCH_OTHER's memcheck, measured" "$OTHER_MC" \
		"MEMCHECK_PROGRAMS=*"
	mode d_left date "memcheck, left out (default for /bin)" "$MC" ""
	[ -e "$FLOOR_LIB" ] && mode d_floor date "floor preload: 16-frame walk + table" "$FLOOR_LIB" ""
fi

# Run one mode's whole workload once: its stdout to $TMP/out.MODE, the
# wall seconds to T, its processes' CPU seconds to C.  The loop is the
# driver: a subshell with the mode's environment exported (no env(1) in
# between) starts each process.
run_mode() { # mode
	local m=$1 bin=$BIN n=$PROCS t0 c0
	[ "$m" = s_lsan ] && bin=$LSAN_BIN
	[ "${M_WORK[$m]}" = date ] && bin=$DATE n=$DATES
	children_cpu
	c0=$REPLY
	clock
	t0=$REPLY
	(
		export LC_ALL=C.UTF-8
		set -f # MEMCHECK_PROGRAMS=* is a value, not a glob
		# shellcheck disable=SC2086 # M_ENV is a word list
		[ -z "${M_ENV[$m]}" ] || export ${M_ENV[$m]}
		[ -z "${M_PRE[$m]}" ] || export LD_PRELOAD="${M_PRE[$m]}"
		for ((i = 0; i < n; i++)); do
			# date's output follows the clock: it prints a fixed date.
			if [ "$bin" = "$DATE" ]; then
				"$bin" -u -d @0
			else
				"$bin" "$i"
			fi
		done
	) >"$TMP/out.$m" 2>/dev/null
	clock
	local t1=$REPLY
	children_cpu
	C=$(((REPLY - c0) / 1000)).$(printf %03d $(((REPLY - c0) % 1000)))
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }')
}

echo "memcheck suite bench: $PROCS suite_test processes, $DATES runs of $DATE, $RUNS rounds"
echo "library: $(readlink -f "$BUILD/libmemcheck.so") (md5 $(md5sum <"$MC" | cut -c1-12)), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$OTHER" ] && echo "other library (BENCH_OTHER): $(readlink -f "$OTHER") (md5 $(md5sum <"$OTHER_MC" | cut -c1-12))"

# Is memcheck there?  One suite_test with a report: a process record.
env LD_PRELOAD="$MC" MEMCHECK_REPORT="$TMP/check.jsonl" MEMCHECK_TEXT=none "$BIN" 5 >/dev/null
grep -q '"name":"process"' "$TMP/check.jsonl" 2>/dev/null ||
	{ echo "suite.sh: memcheck wrote no process record for suite_test" >&2; exit 1; }

: >"$TMP/times"
for ((r = 1; r <= RUNS; r++)); do
	printf '  round %d/%d ...' "$r" "$RUNS"
	order=("${MODES[@]}")
	((r % 2)) || for ((i = 0; i < ${#MODES[@]}; i++)); do order[i]=${MODES[${#MODES[@]} - 1 - i]}; done
	for m in "${order[@]}"; do
		run_mode "$m"
		echo "$m $T $C" >>"$TMP/times"
	done
	echo
done

# Every mode printed what bare printed.
for m in "${MODES[@]}"; do
	ref=s_bare
	[ "${M_WORK[$m]}" = date ] && ref=d_bare
	cmp -s "$TMP/out.$m" "$TMP/out.$ref" ||
		{ echo "suite.sh: $m printed other output than $ref" >&2; diff "$TMP/out.$ref" "$TMP/out.$m" | head >&2; exit 1; }
done

stats() { # mode [column: 2 wall, 3 CPU] -> "median spread%"
	awk -v m="$1" -v c="${2:-2}" '$1 == m { v[n++] = $c }
		END {
			for (i = 1; i < n; i++)
				for (j = i; j > 0 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			med = (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2
			printf "%.6f %.0f\n", med, 100 * (v[n-1] - v[0]) / med
		}' "$TMP/times"
}

{
	echo "| workload | processes | mode | median s | ratio | ms per process over bare | spread | CPU ms per process over bare | CPU spread |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for m in "${MODES[@]}"; do
		ref=s_bare n=$PROCS
		[ "${M_WORK[$m]}" = date ] && ref=d_bare n=$DATES
		read -r med spread < <(stats "$m")
		read -r refmed _ < <(stats "$ref")
		read -r cmed cspread < <(stats "$m" 3)
		read -r crefmed _ < <(stats "$ref" 3)
		awk -v w="${M_WORK[$m]}" -v n="$n" -v l="${M_LABEL[$m]}" -v t="$med" -v r="$refmed" \
			-v sp="$spread" -v c="$cmed" -v cr="$crefmed" -v csp="$cspread" \
			-v bare="$([ "$m" = "$ref" ] && echo 1)" 'BEGIN {
			printf "| %s | %d | %s | %.3f | %.2fx | %s | %s%% | %s | %s%% |\n", w, n, l, t, t / r,
				bare ? "-" : sprintf("%+.2f", (t - r) / n * 1000), sp,
				bare ? sprintf("(%.2f)", c / n * 1000) : sprintf("%+.3f", (c - cr) / n * 1000), csp
		}'
	done
	echo
	echo "Medians of $RUNS rounds, every mode once a round (the order reversed every other round); CPU: the processes' user + system time (the bare row: its own, in brackets); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the end."
} >"$MD"
echo
cat "$MD"
echo "(written to $MD)"

# For bench/chart.sh: every row, and issue 15's figures (bench/targets):
# the suite's ratio under memcheck's defaults, that ratio over
# LeakSanitizer's, and what memcheck adds to one run of /bin/date.
#
# By CPU time (2026-12-06, short44): the processes' user + system time,
# the table's CPU column.  A short process's wall time on these shared
# 2-CPU machines is mostly waiting for a CPU (a bare suite_test 3.5 ms
# wall for 0.77 ms CPU at load 10), and a mode's place in the round
# moved it by +0.2 to +1.0 ms a process (short43: one library timed as
# both); the same processes' CPU time moved by 0.01-0.03 ms, and idle
# the two agree (session 43's make bench: within 0.02 ms a process).
# CPU time leaves out what a process waits for, so the wall figures
# stay beside them (the rows' cost, the info line): memcheck waiting on
# something (a lock, a pipe, its parent) would show there alone.
TSV=$BUILD/bench/suite.tsv
{
	printf 'info\tmake bench-suite %s: %s processes, %s runs of %s, medians of %s rounds, %s CPUs, load %s, library md5 %s\n' \
		"$(date -u +%Y-%m-%d)" "$PROCS" "$DATES" "$DATE" "$RUNS" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(md5sum <"$MC" | cut -c1-12)"
	printf 'lib\t%s\n' "$(md5sum <"$MC" | cut -c1-12)"
	for m in "${MODES[@]}"; do
		ref=s_bare n=$PROCS group="a suite of $PROCS short test processes"
		[ "${M_WORK[$m]}" = date ] && ref=d_bare n=$DATES group="$DATE, $DATES times"
		case $m in
		*_bare) kind=bare ;;
		s_mc | d_mc) kind=mc ;;
		s_lsan) kind=lsan ;;
		*_floor) kind=floor ;;
		*_other) kind=other ;;
		*) kind=mcmode ;;
		esac
		# CPU: the median and ratio; the wall's beside them in the cost
		read -r med _ < <(stats "$m" 3)
		read -r refmed _ < <(stats "$ref" 3)
		read -r wmed _ < <(stats "$m")
		read -r wref _ < <(stats "$ref")
		awk -v g="$group" -v l="${M_LABEL[$m]}" -v t="$med" -v r="$refmed" -v w="$wmed" -v wr="$wref" \
			-v n="$n" -v k="$kind" 'BEGIN {
			if (k == "bare")
				c = sprintf("(wall %.3f s)", w)
			else
				c = sprintf("%+.3f ms CPU a process (wall %+.2f ms, %.2fx)", (t - r) / n * 1000,
					(w - wr) / n * 1000, w / wr)
			printf "row\t%s\t-\t%s, CPU\t%.3f\t%.4f\t%s\t%s\n", g, l, t, t / r, c, k
		}'
	done
	ratio() { # mode reference [column: 3 CPU, 2 wall] -> median ratio
		local a b
		read -r a _ < <(stats "$1" "${3:-3}")
		read -r b _ < <(stats "$2" "${3:-3}")
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }'
	}
	added() { # mode reference processes [column] -> median ms added a process
		local a b
		read -r a _ < <(stats "$1" "${4:-3}")
		read -r b _ < <(stats "$2" "${4:-3}")
		awk -v a="$a" -v b="$b" -v n="$3" 'BEGIN { printf "%.3f", (a - b) / n * 1000 }'
	}
	printf 'metric\tsuite.ratio\tglibc\t%s\n' "$(ratio s_mc s_bare)"
	# beside them (bench/targets' floor and lsan lines)
	[ -e "$FLOOR_LIB" ] && printf 'metric\tfloor.suite.ratio\tglibc\t%s\n' "$(ratio s_floor s_bare)"
	[ -x "$LSAN_BIN" ] && printf 'metric\tlsan.suite.ratio\tglibc\t%s\n' "$(ratio s_lsan s_bare)"
	[ -x "$LSAN_BIN" ] && awk -v m="$(ratio s_mc s_bare)" -v l="$(ratio s_lsan s_bare)" \
		'BEGIN { printf "metric\tsuite.lsan\tglibc\t%.4f\n", m / l }'
	wall="the suite $(ratio s_mc s_bare 2)x bare"
	if [ -x "$DATE" ]; then
		printf 'metric\tdate.ms\tglibc\t%s\n' "$(added d_mc d_bare "$DATES")"
		[ -e "$FLOOR_LIB" ] &&
			printf 'metric\tfloor.date.ms\tglibc\t%s\n' "$(added d_floor d_bare "$DATES")"
		wall="$wall, $DATE $(added d_mc d_bare "$DATES" 2) ms added a process"
	fi
	printf 'info\tsuite.ratio and date.ms by CPU time (user + system of the processes); by wall time: %s\n' "$wall"
} >"$TSV"
exit 0
