# common.sh - sourced by bench/run.sh, bench/suite.sh and bench/instr.sh: what they need
# before they time anything.  Expects BUILD (absolute), OTHER (may be
# empty) and TMP (a fresh directory, removed by the caller's trap); sets
# MC (and OTHER_MC), clock(), children_cpu(), read_allocators().

# One library throughout, copied: a rebuild during the run (someone else's
# make) cannot mix two versions in one table.  Each copy in a lib/ with the
# tree's suppressions/ beside it, where the library looks for the shipped
# files (its directory's parent), as it finds them in the build tree or an
# installed prefix: without them tcmalloc's own 8-byte block reads as a
# leak, and memcheck's exit status (23) stops the run.
install_copy() { # library directory -> the copy's path in REPLY
	mkdir -p "$2/lib" && cp "$(readlink -f "$1")" "$2/lib/libmemcheck.so" &&
		ln -s "$(cd "$BUILD/.." && pwd)/suppressions" "$2/suppressions" || exit 2
	REPLY=$2/lib/libmemcheck.so
}
# The two copies' paths of one length ("this", "that"): LD_PRELOAD's
# value is in each process's environment, whose size moves where its
# stack begins, so that a library timed against a copy of itself runs
# the same layout in both roles (2026-12-07, tree50: "this" and "other"
# differed by a byte, and the one named first read slower in five
# runs of five, whose cause was not found).
install_copy "$BUILD/libmemcheck.so" "$TMP/this"
MC=$REPLY
if [ -n "$OTHER" ]; then
	install_copy "$OTHER" "$TMP/that"
	OTHER_MC=$REPLY
fi

# Nothing from the caller's environment may change what is measured.
unset LD_PRELOAD LD_LIBRARY_PATH
for v in $(compgen -e | grep '^MEMCHECK_'); do unset "$v"; done
# memcheck's file:line cache (memcheck-cache(5)) fresh for the run, not
# the user's: its first processes fill it, as a suite's first tests do.
export MEMCHECK_CACHE=$TMP/cache

# clock: the time in REPLY, without a fork while bash has $EPOCHREALTIME.
if [ -n "${EPOCHREALTIME:-}" ]; then
	clock() { REPLY=$EPOCHREALTIME; }
else # bash < 5
	clock() { REPLY=$(date +%s.%N); }
fi

# The CPU milliseconds (user + system) of the shell's children so far,
# in REPLY: bash's times, whose second line is its children's, written to
# a file (a command substitution would run it in a subshell of its own)
# and read by the shell itself (an awk here would count its own time).
ms_of() { # 1m2.345s -> 62345
	local m=${1%%m*} s=${1#*m}
	s=${s%s}
	REPLY=$((10#$m * 60000 + 10#${s%.*} * 1000 + 10#${s#*.}))
}
children_cpu() {
	local _ u s
	times >"$TMP/cpu"
	{ read -r _ && read -r u s; } <"$TMP/cpu"
	ms_of "$u"
	u=$REPLY
	ms_of "$s"
	REPLY=$((u + REPLY))
}

# The allocators memcheck runs by default, from lib/allocators.def (one
# MC_ALLOCATOR line each, MC_ALLOC_DEFAULT), into ALLOCS (their names)
# and ALLOC_LIB (name -> the library to preload after memcheck, glibc's
# empty: nothing preloaded); those not installed under LIBDIR are left
# out.  The caller declares ALLOC_LIB (declare -A) at its own level.
read_allocators() {
	local a so
	ALLOCS=()
	while IFS=: read -r a so; do
		if [ -z "$so" ] || [ -e "$LIBDIR/$so" ]; then
			ALLOCS+=("$a")
			ALLOC_LIB[$a]=${so:+$LIBDIR/$so}
		fi
	done < <(awk '/^MC_ALLOCATOR\(/ && /MC_ALLOC_DEFAULT/ {
			sub(/^MC_ALLOCATOR\(/, ""); split($0, f, ",")
			for (i = 1; i <= 2; i++) gsub(/^[ "]+|[ "]+$/, "", f[i])
			print f[1] ":" (f[2] == "NULL" ? "" : f[2]) }' "$(dirname "$0")/../lib/allocators.def")
}
