#!/bin/sh
# ignore.sh - a test as shell scripts often are: it runs the program and
# judges what the program printed, not how it exited (the leaking
# program's own status, 23, is dropped).  Preloaded, the shell is left
# out and passes (README, "In a test driver"); under `memcheck run`,
# which reads every process's records, the test fails.
# usage: ignore.sh [PROGRAM]   (default ./t_leak)
prog=${1:-./t_leak}
out=${TMPDIR:-/tmp}/memcheck-ignore.$$
"$prog" >"$out"
grep -q '^parsed leak$' "$out"
s=$?
rm -f "$out"
exit $s
