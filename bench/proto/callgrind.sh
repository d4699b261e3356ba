#!/usr/bin/env bash
# callgrind.sh - instructions a step, the steady guide beside measure.sh's
# times: each mode run at two lengths under callgrind, the difference over
# the difference of steps (start-up and exit cancel out).
#   bench/proto/callgrind.sh [BUILD_DIR]
# Environment: ALLOCS ("glibc jemalloc"), the modes and preloads as
# measure.sh's.  Workloads: churn (malloc_bench 200000 vs 400000), tree
# (tree_bench 200000 vs 400000 blocks; a step is a block allocated and
# freed in both).  Then the table's own share at 400000 steps: inclusive
# instructions a step of the table functions (memcheck: mc_blocks_insert +
# mc_blocks_remove, site counts inside; the prototype: tab_insert +
# tab_remove, its counters inside).
set -u
export LC_ALL=C
BUILD=$(cd "${1:-build}" && pwd) || exit 2
ALLOCS=${ALLOCS:-glibc jemalloc}
LIBDIR=/usr/lib/x86_64-linux-gnu
declare -A SO=([glibc]= [mimalloc]=$LIBDIR/libmimalloc.so.2 [jemalloc]=$LIBDIR/libjemalloc.so.2
	[tcmalloc]=$LIBDIR/libtcmalloc_minimal.so.4)
declare -A SYN=([glibc]=nouserintercepts [mimalloc]='*mimalloc*' [jemalloc]='*jemalloc*' [tcmalloc]='*tcmalloc*')
declare -A PRE=([bare]= [fwd]=$BUILD/bench/libnull_interpose.so [pnone]=$BUILD/proto/libproto_none.so
	[pcompact]=$BUILD/proto/libproto_compact.so [pslots]=$BUILD/proto/libproto_slots.so
	[mc]=$BUILD/libmemcheck.so)
MODES="bare fwd pnone pcompact pslots mc"
OUT=${OUT:-$(mktemp -d /tmp/proto-cg.XXXXXX)} # the profiles kept, for callgrind_annotate
mkdir -p "$OUT"
unset LD_PRELOAD
for v in $(compgen -e | grep '^MEMCHECK_'); do unset "$v"; done

ir() { # alloc mode program steps [valgrind options] -> instructions
	local a=$1 m=$2 prog=$3 steps=$4 pre e=
	shift 4
	pre="${PRE[$m]} ${SO[$a]}"
	pre=${pre# }
	pre=${pre% }
	[ "$m" = mc ] && e="MEMCHECK_STACK_DEPTH=0 MEMCHECK_TEXT=none MEMCHECK_PROCESS=on MEMCHECK_EXITCODE=0"
	# shellcheck disable=SC2086
	env ${pre:+LD_PRELOAD="$pre"} $e valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.$a.$m.${prog##*/}.$steps${*:+.toggled}" \
		--soname-synonyms=somalloc="${SYN[$a]}" "$@" "$prog" "$steps" >/dev/null 2>"$OUT/err" ||
		{ echo "callgrind.sh: $a $m $prog $steps $* failed" >&2; tail "$OUT/err" >&2; exit 1; }
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$OUT/err"
}
printf "%-9s %-6s" alloc work
for m in $MODES; do printf " %9s" "$m"; done
echo "   (instructions a step)"
for a in $ALLOCS; do
	for w in churn tree; do
		case $w in
		churn) p=$BUILD/bench/malloc_bench ;;
		tree) p=$BUILD/bench/tree_bench ;;
		esac
		printf "%-9s %-6s" "$a" "$w"
		for m in $MODES; do
			i1=$(ir "$a" "$m" "$p" 200000) i2=$(ir "$a" "$m" "$p" 400000)
			printf " %9.1f" "$(awk -v a="$i1" -v b="$i2" 'BEGIN { print (b - a) / 200000 }')"
		done
		echo
	done
done
echo "== the table's own functions: instructions a step, collected only inside them"
echo "   (valgrind --toggle-collect; memcheck: mc_blocks_insert + mc_blocks_remove, site"
echo "   counts inside; the prototype: tab_insert + tab_remove, its counters inside)"
for a in $ALLOCS; do
	for w in malloc_bench tree_bench; do
		printf "%-9s %-12s" "$a" "$w"
		for m in pcompact pslots mc; do
			t1=$(ir "$a" "$m" "$BUILD/bench/$w" 200000 --toggle-collect='*blocks_insert' \
				--toggle-collect='*blocks_remove' --toggle-collect='tab_*')
			t2=$(ir "$a" "$m" "$BUILD/bench/$w" 400000 --toggle-collect='*blocks_insert' \
				--toggle-collect='*blocks_remove' --toggle-collect='tab_*')
			printf " %s=%.1f" "$m" "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print (b - a) / 200000 }')"
		done
		echo
	done
done
