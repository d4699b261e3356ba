#!/bin/sh
# rss_self_pad.sh [BYTES...] - test_rss_self's rows with libmemcheck's code
# longer by each BYTES (default 0 4096 8192 65536), to show that the RSS
# figures do not move with the library's size (they did: 20 KiB on the
# C++ program under mimalloc from one commit to the next, libgcc_s's
# code pages mapped around its first touch).  Run from the top of the
# tree after `make all` and the test programs: each size is the
# library's own link (GNUmakefile's, from `make -n`) with BYTES of
# padding after .text, in a scratch copy of build/ that test_rss_self
# reads through MEMCHECK_BUILD.  Prints each row's memcheck less bare
# (KiB: begin/end/peak) and test_rss_self's verdict, per size.
set -e
[ $# -gt 0 ] || set -- 0 4096 8192 65536
top=$(pwd)
[ -x build/tests/test_rss_self ] && [ -f build/libmemcheck.so.0.1.0 ] || {
	echo "rss_self_pad.sh: run from the tree's top after make all and the tests" >&2
	exit 2
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
link=$(make -s -n -W lib/text-order.ld build/libmemcheck.so.0.1.0 | sed -n '/-shared/,$p' | tr -d '\\\n')
for pad in "$@"; do
	v="$scratch/b$pad"
	mkdir -p "$v"
	cp -rs "$top/build/." "$v/"
	rm -f "$v"/libmemcheck.so*
	extra=""
	if [ "$pad" -gt 0 ]; then
		printf 'SECTIONS { .text.mc_pad : { BYTE(0); . += %s - 1; } } INSERT AFTER .text;\n' \
			"$pad" >"$v/pad.ld"
		extra="-Wl,-T,$v/pad.ld"
	fi
	eval "$(echo "$link" | sed "s|-o build/libmemcheck.so.0.1.0|$extra -o $v/libmemcheck.so.0.1.0|")"
	ln -s libmemcheck.so.0.1.0 "$v/libmemcheck.so.0"
	ln -s libmemcheck.so.0 "$v/libmemcheck.so"
	code=$(readelf -lW "$v/libmemcheck.so.0.1.0" | awk '/LOAD/ { print $5; exit }')
	MEMCHECK_BUILD="$v" H_TIMEOUT=150 build/tests/test_rss_self 2>&1 |
		awk -v pad="$pad" -v code="$code" '
		/^test_rss_self: .*bare/ {
			sub(/^test_rss_self: /, "")
			split($0, a, ": bare ")
			split(a[2], n, /[ ,]+/)
			printf "+%-6s code %s  %-55s %+d/%+d/%+d\n", pad, code, a[1], \
				n[5] - n[1], n[6] - n[2], n[7] - n[3]
		}
		/^[0-9]+%:/ || /:F:/ { printf "+%-6s %s\n", pad, $0 }'
done
