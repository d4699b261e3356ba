#!/usr/bin/env bash
# measure.sh - the page-map prototype (pagemap.c) against memcheck's own
# table, side by side: every mode of every allocator once per round,
# round-robin, ROUNDS rounds, medians (bench/run.sh's method).
#
#   bench/proto/measure.sh [BUILD_DIR]    (after make -j2 all, the bench
#                                          binaries and bench/proto/build.sh)
# Environment: ROUNDS (7), ALLOCS ("glibc jemalloc mimalloc"), CHURN
# (malloc_bench steps, 10 M), TREE (tree_bench steps, 1.25 M = run.sh's
# 1/8), THREADS (4), KEEP (1 M), KEEP_ROUNDS (3), OUT (a directory for
# the raw rows: OUT/times, OUT/keep).
#
# Modes: bare; fwd (bench/null_interpose.c: forwarding only); pnone (the
# prototype's wrappers and counters, no table: its floor); pcompact,
# pslots (the two tables); mc (build/libmemcheck.so, MEMCHECK_STACK_DEPTH=0:
# tracking, no stacks).  Workloads: churn (malloc_bench, a ring of 1024
# blocks), tree (tree_bench), threads (malloc_bench --threads N).  Times
# are the programs' own loop_s; the keep runs (malloc_bench --keep KEEP)
# give VmHWM, from which bytes a block = (VmHWM - bare VmHWM) / KEEP, and
# minor page faults (/usr/bin/time %R).
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd) || exit 2
ROUNDS=${ROUNDS:-7}
ALLOCS=${ALLOCS:-glibc jemalloc mimalloc}
CHURN=${CHURN:-10000000}
TREE=${TREE:-1250000}
THREADS=${THREADS:-4}
KEEP=${KEEP:-1000000}
KEEP_ROUNDS=${KEEP_ROUNDS:-3}
OUT=${OUT:-$(mktemp -d /tmp/proto-measure.XXXXXX)}
mkdir -p "$OUT"
LIBDIR=/usr/lib/x86_64-linux-gnu
declare -A SO=([glibc]= [mimalloc]=$LIBDIR/libmimalloc.so.2 [jemalloc]=$LIBDIR/libjemalloc.so.2
	[tcmalloc]=$LIBDIR/libtcmalloc_minimal.so.4)
MODES="bare fwd pnone pcompact pslots mc"
unset LD_PRELOAD
for v in $(compgen -e | grep '^MEMCHECK_'); do unset "$v"; done

pre_of() { # mode -> the preload in front of the allocator
	case $1 in
	bare) echo "" ;;
	fwd) echo "$BUILD/bench/libnull_interpose.so" ;;
	pnone) echo "$BUILD/proto/libproto_none.so" ;;
	pcompact) echo "$BUILD/proto/libproto_compact.so" ;;
	pslots) echo "$BUILD/proto/libproto_slots.so" ;;
	mc) echo "$BUILD/libmemcheck.so" ;;
	esac
}
MCENV="MEMCHECK_STACK_DEPTH=0 MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0"

run() { # alloc mode program args... -> the program's line
	local a=$1 m=$2 pre
	shift 2
	pre="$(pre_of "$m") ${SO[$a]}"
	pre=${pre# }
	pre=${pre% }
	local e=
	[ "$m" = mc ] && e=$MCENV
	# shellcheck disable=SC2086
	env ${pre:+LD_PRELOAD="$pre"} $e /usr/bin/time -f "faults=%R" "$@" 2>"$OUT/err" ||
		{ echo "measure.sh: $a $m $* failed" >&2; cat "$OUT/err" >&2; exit 1; }
	grep -o 'faults=[0-9]*' "$OUT/err"
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

: >"$OUT/times"
for ((r = 1; r <= ROUNDS; r++)); do
	for a in $ALLOCS; do
		for m in $MODES; do
			l=$(run "$a" "$m" "$BUILD/bench/malloc_bench" "$CHURN")
			echo "$a churn $m $(field loop_s <<<"$l") $(field checksum <<<"$l")" >>"$OUT/times"
			l=$(run "$a" "$m" "$BUILD/bench/tree_bench" "$TREE")
			echo "$a tree $m $(field loop_s <<<"$l") $(field checksum <<<"$l")" >>"$OUT/times"
			l=$(run "$a" "$m" "$BUILD/bench/malloc_bench" "$CHURN" --threads "$THREADS")
			echo "$a threads $m $(field loop_s <<<"$l") $(field checksum <<<"$l")" >>"$OUT/times"
		done
	done
	echo "round $r done" >&2
done
: >"$OUT/keep"
for ((r = 1; r <= KEEP_ROUNDS; r++)); do
	for a in $ALLOCS; do
		for m in $MODES; do
			l=$(run "$a" "$m" "$BUILD/bench/malloc_bench" --keep "$KEEP")
			echo "$a keep $m $(field vmhwm_kb <<<"$l") $(field faults <<<"$l") $(field loop_s <<<"$l")" >>"$OUT/keep"
		done
	done
done

# Medians; each mode's ratio to bare and to fwd (the floor any preload pays).
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "== loop seconds, median of $ROUNDS (x bare)   raw rows: $OUT/times"
printf "%-9s %-8s" alloc work
for m in $MODES; do printf " %16s" "$m"; done
echo
for a in $ALLOCS; do
	for w in churn tree threads; do
		b=$(awk -v a="$a" -v w="$w" '$1 == a && $2 == w && $3 == "bare" { print $4 }' "$OUT/times" | med)
		printf "%-9s %-8s" "$a" "$w"
		for m in $MODES; do
			t=$(awk -v a="$a" -v w="$w" -v m="$m" '$1 == a && $2 == w && $3 == m { print $4 }' "$OUT/times" | med)
			printf " %8.4f (%4.2fx)" "$t" "$(awk -v t="$t" -v b="$b" 'BEGIN { print t / b }')"
		done
		echo
	done
done
echo "== keep $KEEP: VmHWM kB, minor faults, bytes a block over bare (median of $KEEP_ROUNDS)"
for a in $ALLOCS; do
	b=$(awk -v a="$a" '$1 == a && $3 == "bare" { print $4 }' "$OUT/keep" | med)
	for m in $MODES; do
		h=$(awk -v a="$a" -v m="$m" '$1 == a && $3 == m { print $4 }' "$OUT/keep" | med)
		f=$(awk -v a="$a" -v m="$m" '$1 == a && $3 == m { print $5 }' "$OUT/keep" | med)
		printf "%-9s %-9s vmhwm_kb=%7d faults=%7d bytes_a_block=%6.2f\n" "$a" "$m" "$h" "$f" \
			"$(awk -v h="$h" -v b="$b" -v k="$KEEP" 'BEGIN { print (h - b) * 1024 / k }')"
	done
done
# Checksums must agree with bare (the prototype changed nothing the program sees).
awk '{ k = $1 " " $2 } $3 == "bare" { ref[k] = $5 } { s[k " " $3] = $5 }
	END { for (x in s) { split(x, f, " "); if (s[x] != ref[f[1] " " f[2]]) { print "checksum differs: " x; bad = 1 } } exit bad }' "$OUT/times"
