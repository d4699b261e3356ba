#!/usr/bin/env bash
# phases.sh - where a short measured process's added time goes, by phase:
# N processes run one after another bare and under the preload, each
# loop sampled by perf (cpu-clock, the software timer: no hardware
# counters in these VMs) with call chains, and every sample of the
# workload's processes put in the phase of memcheck's frames in its chain
# (start-up, stack capture, the exit's scan, suppressions, report ...;
# start-up is life.c's resolve wherever it runs: in the constructor, or
# in the first call into memcheck, which mimalloc's start makes)
# and its kind (user code, a system call, a page fault, other kernel
# work).  Printed: microseconds a process, memcheck's loop less the bare
# one's, by phase, biggest first.  Callgrind counts instructions; this
# counts time, where a short process's cost is mostly first touches (page
# faults, populated pages, cold lines) and system calls (short46).
#
#   bench/proto/phases.sh [BUILD_DIR]
#
# Environment: WORK (date: /bin/date -u -d @0, measured, as suite.sh runs
# it; suite: bench/suite_test 0..N-1; default date), RUNS (processes a
# loop, default 300), ALLOC (glibc, mimalloc, jemalloc, tcmalloc: that
# allocator preloaded in both loops; default glibc), HZ (samples a second,
# default 25000).  The library is copied with the tree's suppressions
# beside it, its cache fresh and warmed by one loop first, as suite.sh's.
# The figures are perf's: sampling adds its own time to both loops, so
# compare rows of one run, not runs.
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd) || exit 2
WORK=${WORK:-date}
RUNS=${RUNS:-300}
ALLOC=${ALLOC:-glibc}
HZ=${HZ:-25000}
LIBDIR=/usr/lib/x86_64-linux-gnu
declare -A SO=([glibc]= [mimalloc]=$LIBDIR/libmimalloc.so.2 [jemalloc]=$LIBDIR/libjemalloc.so.2
	[tcmalloc]=$LIBDIR/libtcmalloc_minimal.so.4)
[ -n "${SO[$ALLOC]+x}" ] || { echo "phases.sh: ALLOC: glibc, mimalloc, jemalloc or tcmalloc" >&2; exit 2; }
command -v perf >/dev/null || { echo "phases.sh: perf not found" >&2; exit 2; }
case $WORK in
date) COMM=date ;;
suite) COMM=suite_test
	[ -x "$BUILD/bench/suite_test" ] || { echo "phases.sh: $BUILD/bench/suite_test not built" >&2; exit 2; } ;;
*) echo "phases.sh: WORK: date or suite" >&2; exit 2 ;;
esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-phases.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
OTHER=
. "$(dirname "$0")/../common.sh" # MC: the library copied; MEMCHECK_* unset; MEMCHECK_CACHE

# loop PRELOAD: the workload RUNS times, as a test driver runs it
loop() {
	(
		export LC_ALL=C.UTF-8 MEMCHECK_PROGRAMS='*'
		[ -z "$1" ] || export LD_PRELOAD="$1"
		for ((i = 0; i < RUNS; i++)); do
			if [ "$WORK" = date ]; then /bin/date -u -d @0; else "$BUILD/bench/suite_test" "$i"; fi
		done
	) >/dev/null 2>&1
}
export -f loop
export WORK RUNS BUILD
pre=${SO[$ALLOC]}
loop "$MC${pre:+:$pre}" # the cache warmed
for m in mc bare; do
	p=$pre
	[ $m = mc ] && p="$MC${pre:+:$pre}"
	# (its status is the loop's last process's: 23 where it leaks)
	perf record -q -g -e cpu-clock -F "$HZ" -o "$TMP/$m.data" -- bash -c "loop '$p'" 2>/dev/null
	[ -s "$TMP/$m.data" ] || { echo "phases.sh: perf record failed" >&2; exit 1; }
	perf script -i "$TMP/$m.data" --comm "$COMM" -F ip,sym,dso 2>/dev/null >"$TMP/$m.txt"
done

# A sample: its frames, innermost first, "ADDR SYM (DSO)" a line, then a
# blank line.  Its phase: the first of the list below any of its
# libmemcheck frames names (a name's start), else memcheck's outermost
# frame, else the innermost user frame's object.
awk -v runs="$RUNS" -v hz="$HZ" '
BEGIN {
	n = split("exit: the suppression set'"'"'s files checked|notes_hold light_key cache_key mc_suppcache_get;" \
		"exit: the kept verdicts'"'"' file read|verdicts_read index_build mc_suppcache_light;" \
		"exit: kept verdicts looked up|kept_verdicts mc_suppcache_verdict;" \
		"exit: names of the records left|name_ahead name_asked mc_symbolize_quick_many;" \
		"exit: suppressions matched|mc_suppress_region;" \
		"exit: reachability scan|mc_scan;" \
		"exit: report written|mc_report_emit emit_text mc_text_hold_end held_out;" \
		"exit: ancestors told (descend.c)|mc_descend;" \
		"exit: the allocator'"'"'s statistics|take_alloc_stats mc_allocator_stats;" \
		"exit: the rest|at_exit process_end mc_regions_end_all region_pop mc_exit_status;" \
		"start-up|mc_constructor resolve. mc_resolve;" \
		"allocations: stack capture|mc_stack_capture capture_ rule_in mc_cfi_rule mc_depot;" \
		"allocations: the rest|mc_track_ malloc calloc realloc free posix_memalign aligned_alloc memalign", ph, ";")
	for (i = 1; i <= n; i++) {
		split(ph[i], a, "|")
		name[i] = a[1]
		nk[i] = split(a[2], keys, " ")
		for (j = 1; j <= nk[i]; j++)
			key[i, j] = keys[j]
	}
	us = 1e6 / hz / runs
}
FNR == 1 { file = FILENAME ~ /mc\.txt$/ ? "mc" : "bare" }
function flush(   i, j, f, p, kind) {
	if (!nf)
		return
	kind = "user"
	for (f = 1; f <= nf; f++) {
		if (dso[f] !~ /kernel/)
			continue
		if (sym[f] ~ /exc_page_fault/) { kind = "fault"; break }
		if (sym[f] ~ /^(__x64_sys_|ksys_|__do_sys_)/) kind = "syscall"
		else if (kind == "user") kind = "kernel"
	}
	p = ""
	for (i = 1; i <= n && p == ""; i++)
		for (f = 1; f <= nf && p == ""; f++)
			if (dso[f] ~ /libmemcheck\.so/)
				for (j = 1; j <= nk[i]; j++)
					if (index(sym[f], key[i, j]) == 1) { p = name[i]; break }
	for (f = nf; f >= 1 && p == ""; f--)
		if (dso[f] ~ /libmemcheck\.so/)
			p = "memcheck, elsewhere: " sym[f]
	for (f = 1; f <= nf && p == ""; f++)
		if (dso[f] !~ /kernel/) {
			d = dso[f]; sub(/.*\//, "", d)
			p = "outside memcheck'"'"'s frames: " d
		}
	if (p == "")
		p = "outside memcheck'"'"'s frames: kernel"
	t[file, p] += us; t[file, p, kind] += us; tot[file] += us; seen[p] = 1
	nf = 0
}
NF == 0 { flush(); next }
{
	s = $0; sub(/^[ \t]*[0-9a-f]+ /, "", s)
	d = s; sub(/.*\(/, "", d); sub(/\)$/, "", d)
	sub(/ \([^(]*\)$/, "", s); sub(/\+0x[0-9a-f]+$/, "", s)
	nf++; sym[nf] = s; dso[nf] = d
}
END {
	flush()
	printf "%s processes: CPU us a process (perf-scale), memcheck %.0f, bare %.0f, added %.0f\n",
		runs, tot["mc"], tot["bare"], tot["mc"] - tot["bare"]
	for (p in seen) {
		k = ""
		split("user syscall fault kernel", kinds, " ")
		for (i = 1; i <= 4; i++)
			if ((v = t["mc", p, kinds[i]] - t["bare", p, kinds[i]]) >= 0.5 || v <= -0.5)
				k = k sprintf(" %s %.0f", kinds[i], v)
		printf "%.1f\t%s\t%s\n", t["mc", p] - t["bare", p], p, k
	}
}' "$TMP/mc.txt" "$TMP/bare.txt" | {
	read -r head
	echo "$WORK, $ALLOC, $head"
	sort -t "$(printf '\t')" -k1,1gr |
		awk -F '\t' '$1 >= 1 || $1 <= -1 { printf "%8.1f  %-45s%s\n", $1, $2, $3 }'
}
