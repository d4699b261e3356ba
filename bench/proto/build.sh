#!/bin/sh
# build.sh - build the page-map prototype's three variants (pagemap.c's
# head) into BUILD/proto: libproto_none.so (wrappers and counters, no
# table: the floor), libproto_compact.so, libproto_slots.so.
#   bench/proto/build.sh [BUILD_DIR]
set -e
B=${1:-build}/proto
mkdir -p "$B"
src=$(dirname "$0")/pagemap.c
CFLAGS="-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -O2 -g -fPIC -shared -fvisibility=hidden -fno-builtin -fno-omit-frame-pointer"
for v in none:0 compact:1 slots:2; do
	# shellcheck disable=SC2086
	extra=; [ "${v#*:}" = 0 ] && extra="-Wno-unused-function -Wno-unused-parameter" # the floor leaves the table unused
	cc $CFLAGS $extra -DTABLE="${v#*:}" -o "$B/libproto_${v%%:*}.so" "$src" -ldl -pthread
done
