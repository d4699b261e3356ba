#!/bin/sh
# envi.sh - a test run with a cleared environment, as a wrapper or a
# harness that passes nothing on runs it.  memcheck follows the exec
# (MEMCHECK_FOLLOW_EXEC): the leak fails the test, preloaded and under
# `memcheck run` (it ran unchecked and passed before 6 December 2026);
# under valgrind's command line only --trace-children=yes follows it.
# usage: envi.sh [PROGRAM]   (default ./t_leak)
exec env -i "${1:-./t_leak}"
