#!/bin/sh
# check.sh - the test drivers of tests/drivers/, each against an installed
# memcheck, as a user's project meets it: a CMake project (find_package,
# ctest -T memcheck, plain add_test, cmocka, Criterion and CUnit suites), a meson
# project (pkg-config, add_test_setup, meson test --wrapper; a test it
# times out, its record kept) and an
# automake+libtool project (pkg-config, LOG_COMPILER, AM_TESTS_ENVIRONMENT,
# autoconf-archive's make check-valgrind, a GNU Autotest suite run by a
# rule of its own).
# Each has a clean test, a leaking one (also run with a cleared
# environment, env -i) and one that skips itself, and this
# script asserts what the driver itself reports: the leak a failed test,
# clean passed, skip skipped (and, for TAP, the subtests kept).
#
# usage: check.sh PREFIX WORK
#   PREFIX  where `make install PREFIX=...` put memcheck (not a system
#           directory: the projects find it through pkg-config's path and
#           CMAKE_PREFIX_PATH, as a user with a non-system prefix does)
#   WORK    a directory for the projects' build trees; kept between runs:
#           the automake project's autoreconf and configure, its slowest
#           steps, run again only when its files change
set -u
PREFIX=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
PATH=$PREFIX/bin:$PATH
PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
export PATH PKG_CONFIG_PATH
# the tests' own environment: no memcheck settings from the caller's
for v in $(env | sed -n 's/^\(MEMCHECK_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
# but the frames' cache in the work tree, never the home directory's
mkdir -p "$WORK"
MEMCHECK_CACHE=$(cd "$WORK" && pwd)/cache
export MEMCHECK_CACHE
failed=

for tool in cmake ctest meson ninja autoreconf libtoolize; do
	command -v $tool >/dev/null || {
		echo "drivers-check: $tool not found (make deps installs it)"; exit 1; }
done
mkdir -p "$WORK"
# memcheck behind the name valgrind, for the projects' own valgrind hooks
# (meson's add_test_setup, autoconf-archive's AX_VALGRIND_CHECK), first in
# their PATH only: the real valgrind is installed too
mkdir -p "$WORK/vg"
ln -sf "$PREFIX/bin/memcheck" "$WORK/vg/valgrind"

# expect FILE ERE WHAT: FILE has a line that matches ERE.
expect() {
	if ! grep -Eq -- "$2" "$1"; then
		echo "drivers-check: $3: no line matching /$2/ in $1:"
		tail -40 "$1" | sed 's/^/    /'
		failed="$failed $3"
	fi
}

# expect_none FILE ERE WHAT: FILE has no line that matches ERE.
expect_none() {
	if grep -Eq -- "$2" "$1"; then
		echo "drivers-check: $3: a line matching /$2/ in $1:"
		tail -40 "$1" | sed 's/^/    /'
		failed="$failed $3"
	fi
}

# junit_failed FILE NAMES WHAT: the JUnit file's failed test cases are
# exactly NAMES (sorted, space-separated), each named; the file valid.
junit_failed() {
	if ! xmllint --noout "$1" 2>/dev/null; then
		echo "drivers-check: $3: $1 missing or not XML"
		failed="$failed $3"
		return
	fi
	got=$(xmllint --xpath '//testcase[failure or error]/@name' "$1" 2>/dev/null |
		sed 's/^ *name="\(.*\)"$/\1/' | sort | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" != "$2" ]; then
		echo "drivers-check: $3: failed test cases \"$got\" in $1, expected \"$2\""
		failed="$failed $3"
	fi
}

# run LOG COMMAND...: run it, its output in LOG; say when it cannot.
run() {
	log=$1
	shift
	"$@" >"$log" 2>&1
}

# ---- CMake and CTest -------------------------------------------------
C=$WORK/cmake
rm -rf "$C"
if ! run "$WORK/cmake.log" cmake -S "$HERE/cmake" -B "$C" -DCMAKE_PREFIX_PATH="$PREFIX" \
	-DCMAKE_C_FLAGS=-g || ! run "$WORK/cmake-build.log" cmake --build "$C"; then
	cat "$WORK/cmake.log" "$WORK/cmake-build.log" 2>/dev/null | tail -30
	echo "drivers-check: the CMake project does not build"; exit 1
fi
(cd "$C" && ctest -T memcheck -L checker) >"$WORK/ctest-memcheck.log" 2>&1
L=$WORK/ctest-memcheck.log
expect "$L" 'MemCheck #[0-9]+: clean \.+ +Passed' "ctest -T memcheck: clean passes"
expect "$L" 'MemCheck #[0-9]+: leak \.+\*+Failed' "ctest -T memcheck: the leak fails"
expect "$L" 'MemCheck #[0-9]+: skip \.+\*+Skipped' "ctest -T memcheck: skip is skipped"
expect "$L" 'MemCheck: #[0-9]+: leak \.+ +Defects: 1$' "ctest -T memcheck: one defect, the leak's"
expect "$L" '^Memory Leak - 1$' "ctest -T memcheck: dynamic analysis counts the leak"
expect "$C/Testing/Temporary/MemoryChecker.2.log" \
	'== 5 bytes in 1 blocks are definitely lost in loss record 1 of 1$' \
	"ctest -T memcheck: the leak in its log, in valgrind's words"
expect "$C/Testing/Temporary/MemoryChecker.2.log" 'at .*: parse_name \(.*name\.c:[0-9]+\)' \
	"ctest -T memcheck: the leak's stack in the project's library"
# A Criterion suite without the glue: its runner starts its workers by
# fork and exec.  valgrind's command line, as valgrind's default
# --trace-children=no, leaves an exec'd program unchecked: the suite
# passes, its worker's leak no defect, as valgrind 3.19 reports it.
# With --trace-children=yes each process is judged alone, as valgrind
# does: the suite passes, the leak a defect; MEMCHECK_ANCESTORS=1 in the
# environment fails it
(cd "$C" && ctest -T memcheck -L workers) >"$WORK/ctest-memcheck-criterion.log" 2>&1
L=$WORK/ctest-memcheck-criterion.log
expect "$L" 'MemCheck #[0-9]+: criterion_plain \.+ +Passed' \
	"ctest -T memcheck: a Criterion suite passes, its worker not traced, as under valgrind"
expect_none "$L" '^Memory Leak' "ctest -T memcheck: the untraced Criterion worker's leak no defect"
TRACE="MemoryCheckCommandOptions=-q --tool=memcheck --leak-check=yes --show-reachable=yes"
TRACE="$TRACE --num-callers=50 --error-exitcode=23 --trace-children=yes"
(cd "$C" && ctest -T memcheck -L workers --overwrite "$TRACE") \
	>"$WORK/ctest-memcheck-criterion-trace.log" 2>&1
L=$WORK/ctest-memcheck-criterion-trace.log
expect "$L" 'MemCheck #[0-9]+: criterion_plain \.+ +Passed' \
	"ctest -T memcheck, --trace-children=yes: a Criterion suite passes, its worker judged alone"
expect "$L" '^Memory Leak - 1$' \
	"ctest -T memcheck, --trace-children=yes: the Criterion worker's leak a defect"
(cd "$C" && MEMCHECK_ANCESTORS=1 ctest -T memcheck -L workers --overwrite "$TRACE") \
	>"$WORK/ctest-memcheck-criterion-ancestors.log" 2>&1
L=$WORK/ctest-memcheck-criterion-ancestors.log
expect "$L" 'MemCheck #[0-9]+: criterion_plain \.+\*+Failed' \
	"ctest -T memcheck, --trace-children=yes, MEMCHECK_ANCESTORS=1: a Criterion suite's leaking worker fails it"
# No glue at all: a project without include(CTest), memcheck given to
# ctest on its command line
C2=$WORK/cmake-plain
rm -rf "$C2"
if ! run "$WORK/cmake-plain.log" cmake -S "$HERE/cmake" -B "$C2" -DCMAKE_PREFIX_PATH="$PREFIX" \
	-DNO_CHECKER=ON || ! run "$WORK/cmake-plain-build.log" cmake --build "$C2" --target t_leak t_clean; then
	cat "$WORK/cmake-plain.log" "$WORK/cmake-plain-build.log" 2>/dev/null | tail -30
	echo "drivers-check: the CMake project without CTest does not build"; exit 1
fi
(cd "$C2" && ctest -T memcheck -L checker --overwrite MemoryCheckCommand="$PREFIX/bin/memcheck" \
	--overwrite MemoryCheckType=Valgrind \
	--overwrite "MemoryCheckCommandOptions=-q --leak-check=yes --error-exitcode=23") \
	>"$WORK/ctest-overwrite.log" 2>&1
L=$WORK/ctest-overwrite.log
expect "$L" 'MemCheck #[0-9]+: clean \.+ +Passed' "ctest --overwrite: clean passes"
expect "$L" 'MemCheck #[0-9]+: leak \.+\*+Failed' "ctest --overwrite: the leak fails"
expect "$L" 'MemCheck #[0-9]+: skip \.+\*+Skipped' "ctest --overwrite: skip is skipped"
expect "$L" '^Memory Leak - 1$' "ctest --overwrite: dynamic analysis counts the leak"
# in parallel, with CTest's JUnit file: exactly the leaking tests failed
(cd "$C" && ctest -L plain -j4 --output-junit "$C/junit-plain.xml") >"$WORK/ctest-plain.log" 2>&1
L=$WORK/ctest-plain.log
for how in preload run; do
	expect "$L" "Test +#[0-9]+: ${how}_clean \\.+ +Passed" "ctest, $how: clean passes"
	expect "$L" "Test +#[0-9]+: ${how}_leak \\.+\\*+Failed" "ctest, $how: the leak fails"
	expect "$L" "Test +#[0-9]+: ${how}_skip \\.+\\*+Skipped" "ctest, $how: skip is skipped"
done
expect "$L" 'Test +#[0-9]+: run_ignore \.+\*+Failed' \
	"ctest, run: a shell script's test that ignores its leaking program's status fails"
for how in preload run; do
	expect "$L" "Test +#[0-9]+: ${how}_envi \\.+\\*+Failed" \
		"ctest, $how: the leaking test run with a cleared environment (env -i) fails"
	# a tool that fails on purpose and leaks: WILL_FAIL passes it, and
	# a script that checks its failure passes (run_expect failed before
	# session 48)
	expect "$L" "Test +#[0-9]+: ${how}_reject \\.+ +Passed" \
		"ctest, $how: WILL_FAIL, the tool fails on purpose and leaks: passed"
	expect "$L" "Test +#[0-9]+: ${how}_expect \\.+ +Passed" \
		"ctest, $how: a script that expects the leaking tool's failure passes"
done
junit_failed "$C/junit-plain.xml" \
	"preload_criterion preload_envi preload_leak run_envi run_ignore run_leak" \
	"ctest -j4 --output-junit"
expect "$L" 'Test +#[0-9]+: preload_criterion \.+\*+Failed' \
	"ctest, preload: a Criterion suite's leaking worker fails it"
(cd "$C" && ctest -L framework) >"$WORK/ctest-framework.log" 2>&1
L=$WORK/ctest-framework.log
expect "$L" 'Test +#[0-9]+: cmocka \.+\*+Failed' "cmocka: the suite fails"
expect "$L" 'Test +#[0-9]+: criterion \.+\*+Failed' "Criterion: the suite fails"
expect "$L" 'Test +#[0-9]+: cunit \.+\*+Failed' "CUnit: the suite fails"
T=$C/Testing/Temporary/LastTest.log
expect "$T" 'name\.c:[0-9]+  - memcheck: region "leaks": 29 bytes in 1 blocks definitely lost' \
	"CUnit: the leaking test fails at the leak's line"
expect "$T" 'Test: clean \.\.\.passed' "CUnit: the clean test passes"
# the same suite under memcheck as CTest's memory checker: the leak its
# one defect, CUnit's own blocks none
(cd "$C" && ctest -T memcheck -L glue) >"$WORK/ctest-memcheck-glue.log" 2>&1
L=$WORK/ctest-memcheck-glue.log
expect "$L" 'MemCheck #[0-9]+: cunit \.+\*+Failed' "ctest -T memcheck: the CUnit suite fails"
expect "$L" 'MemCheck: #[0-9]+: cunit \.+ +Defects: 1$' "ctest -T memcheck: CUnit's one defect, the leak's"
X=$C/cmocka.xml
expect "$X" 'tests="3" failures="1" errors="0" skipped="1"' "cmocka's XML: 1 failure, 1 skip"
expect "$X" 'memcheck: region "leaks": 29 bytes in 1 blocks definitely lost \(allocated in parse_name\)' \
	"cmocka's XML: the leak"
expect "$X" 'name\.c:[0-9]+: error: Failure!' "cmocka's XML: the leak's line"
X=$C/criterion.xml
expect "$X" '<testcase name="leaks" [^>]*status="FAILED"' "Criterion's XML: the leak fails"
expect "$X" 'name\.c:[0-9]+: memcheck: region .leaks.: 6 bytes in 1 blocks definitely lost' \
	"Criterion's XML: the leak at its line"
expect "$X" '<testcase name="skipped" [^>]*status="SKIPPED"' "Criterion's XML: skip is skipped"
expect "$X" '<testcase name="clean" [^>]*status="PASSED"' "Criterion's XML: clean passes"

# ---- meson ----------------------------------------------------------
M=$WORK/meson
rm -rf "$M"
if ! run "$WORK/meson.log" meson setup "$M" "$HERE/meson" ||
	! run "$WORK/meson-build.log" ninja -C "$M"; then
	cat "$WORK/meson.log" "$WORK/meson-build.log" 2>/dev/null | tail -30
	echo "drivers-check: the meson project does not build"; exit 1
fi
# meson's JSON log, one test a line: "name" ... "result"
meson_expect() {
	# a leak is 99, meson's hard error (ERROR), under memcheck run -q
	# and the preload setup's MEMCHECK_EXITCODE=99; valgrind's command
	# line exits with the project's --error-exitcode=1 (FAIL)
	case $2 in --setup\ valgrind) lk=FAIL ;; *) lk=ERROR ;; esac
	# ignore.sh fails where memcheck run reads the records; preloaded
	# or under valgrind's command line the shell is left out
	case $2 in --setup\ memcheck|--wrapper) ign=ignore:ERROR ;; *) ign= ;; esac
	# a cleared environment (env -i) is followed, but not by valgrind's
	# command line, whose --trace-children=no runs it unchecked
	case $2 in --setup\ valgrind) envi=env-i:OK ;; *) envi=env-i:ERROR ;; esac
	# should_fail: the tool that fails on purpose and leaks, an expected
	# failure (the script that checks it passes); t_leak expected to fail,
	# exiting 0 and leaking: ERROR (UNEXPECTEDPASS bare; EXPECTEDFAIL with
	# 23 before session 48), and under valgrind's --error-exitcode=1 the
	# failure it expected, as under valgrind
	case $2 in --setup\ valgrind) xl=xleak:EXPECTEDFAIL ;; *) xl=xleak:ERROR ;; esac
	for t in clean:OK leak:$lk skip:SKIP tap-clean:OK tap-leak:ERROR $ign $envi \
		reject:EXPECTEDFAIL expect:OK $xl; do
		expect "$1" "\"name\": \"${t%%:*}\".*\"result\": \"${t#*:}\"" "meson $2: ${t%%:*} ${t#*:}"
	done
}
for setup in memcheck preload; do
	(cd "$M" && meson test --no-rebuild --setup $setup --num-processes 4) \
		>"$WORK/meson-$setup.log" 2>&1
	meson_expect "$M/meson-logs/testlog-$setup.json" "--setup $setup"
done
# meson's JUnit file: the leaking tests failed, named.  Not the TAP
# test's: meson 1.0 writes a TAP test's subtests there, not the test's
# own ERROR (its exit status), as it does for any TAP test that exits
# non-zero (README, "In a test driver")
junit_failed "$M/meson-logs/testlog-memcheck.junit.xml" "env-i ignore leak xleak" \
	"meson test --num-processes 4, JUnit"
# valgrind's command line (memcheck's counterpart of it) behind the name
(cd "$M" && PATH=$WORK/vg:$PATH meson test --no-rebuild --setup valgrind) \
	>"$WORK/meson-valgrind.log" 2>&1
meson_expect "$M/meson-logs/testlog-valgrind.json" "--setup valgrind"
# meson names the log after the wrapper's program: testlog-memcheck again
(cd "$M" && meson test --no-rebuild --wrapper "memcheck run -q --") >"$WORK/meson-wrapper.log" 2>&1
meson_expect "$M/meson-logs/testlog-memcheck.json" "--wrapper"
# the TAP stream as the test wrote it: memcheck writes nothing to stdout
expect "$M/meson-logs/testlog-memcheck.json" \
	'"name": "tap-leak", "stdout": "1\.\.2\\nok 1 - first\\nok 2 - second\\n"' \
	"meson --wrapper: the leaking TAP test's output is its own"

# A test meson times out (SIGTERM, SIGKILL 0.5 s later) while it holds
# 500,000 live blocks: its record arrives before the SIGKILL, preloaded
# and through memcheck run's --report (before 6 December 2026 a scan
# that outlasted the 0.5 s lost it, and memcheck run, interrupted, wrote
# no report)
MT=$WORK/meson-timeout
rm -rf "$MT" "$WORK/timeout.jsonl" "$WORK/timeout-run.json"
if ! run "$WORK/meson-timeout-setup.log" meson setup "$MT" "$HERE/meson-timeout" ||
	! run "$WORK/meson-timeout-build.log" ninja -C "$MT"; then
	cat "$WORK/meson-timeout-setup.log" "$WORK/meson-timeout-build.log" 2>/dev/null | tail -30
	echo "drivers-check: the meson timeout project does not build"; exit 1
fi
(cd "$MT" && MEMCHECK_REPORT="$WORK/timeout.jsonl" \
	LD_PRELOAD="$(pkg-config --variable=preload memcheck)" meson test --no-rebuild) \
	>"$WORK/meson-timeout.log" 2>&1
expect "$MT/meson-logs/testlog.json" '"name": "timeout".*"result": "TIMEOUT"' \
	"meson, a test timed out: TIMEOUT"
expect "$WORK/timeout.jsonl" '"signal_name":"SIGTERM"' \
	"meson, a test timed out, preloaded: its record"
(cd "$MT" && meson test --no-rebuild \
	--wrapper "memcheck run -q --report $WORK/timeout-run.json --") \
	>"$WORK/meson-timeout-run.log" 2>&1
expect "$MT/meson-logs/testlog-memcheck.json" '"name": "timeout".*"result": "TIMEOUT"' \
	"meson --wrapper, a test timed out: TIMEOUT"
expect "$WORK/timeout-run.json" '"signal_name":"SIGTERM"' \
	"meson --wrapper, a test timed out: memcheck run's --report has its record"

# ---- automake and libtool -------------------------------------------
A=$WORK/automake
mkdir -p "$A"
same=yes
for f in "$HERE"/automake/* "$HERE"/src/*.c "$HERE"/src/*.sh; do
	cmp -s "$f" "$A/$(basename "$f")" || same=no
done
[ -x "$A/configure" ] || same=no
if [ $same = no ]; then
	rm -rf "$A" && mkdir -p "$A" && cp -p "$HERE"/automake/* "$HERE"/src/*.c "$HERE"/src/*.sh "$A"/
	if ! (cd "$A" && run "$WORK/autoreconf.log" autoreconf -fi &&
	      run "$WORK/configure.log" env PATH="$WORK/vg:$PATH" ./configure); then
		cat "$WORK/autoreconf.log" "$WORK/configure.log" 2>/dev/null | tail -30
		echo "drivers-check: the automake project does not configure"; exit 1
	fi
fi
# trs_expect TEST RESULT...: automake's result file for TEST says them
# (TEST without the extension TEST_EXTENSIONS names).
trs_expect() {
	t=$1
	shift
	for res; do
		expect "$A/${t%.t*}.trs" "^:test-result: $res" "automake $how: $t $res"
	done
}
# check-valgrind: configure asked `valgrind --tool=memcheck --help`,
# which memcheck refused before session 37: no tool enabled, and make
# check-valgrind ran no test and passed
expect "$WORK/configure.log" '^checking for Valgrind tool memcheck\.\.\. yes' \
	"automake: AX_VALGRIND_CHECK finds valgrind's memcheck tool"
for how in LOG_COMPILER AM_TESTS_ENVIRONMENT check-valgrind; do
	# a run that runs nothing must not pass on the last one's results
	rm -f "$A"/*.trs "$A"/t_*.log "$A"/skip.log "$A"/ignore.log "$A"/envi.log "$A"/expect.log "$A"/xleak.log "$A"/tap-*.log "$A"/leak.log \
		"$A"/test-suite*.log
	if [ $how = LOG_COMPILER ]; then
		# the parallel harness, four tests at a time
		(cd "$A" && make -j4 check) >"$WORK/automake-$how.log" 2>&1
	elif [ $how = check-valgrind ]; then
		(cd "$A" && make check-valgrind) >"$WORK/automake-$how.log" 2>&1
	else
		(cd "$A" && make check LOG_COMPILER= TEST_LOG_COMPILER= TAP_LOG_COMPILER= \
			AM_TESTS_ENVIRONMENT='LD_PRELOAD=$(MEMCHECK_PRELOAD) MEMCHECK_EXITCODE=99; export LD_PRELOAD MEMCHECK_EXITCODE;') \
			>"$WORK/automake-$how.log" 2>&1
	fi
	trs_expect t_clean PASS
	# a leak: 99, automake's hard error, under memcheck run -q and the
	# preload's MEMCHECK_EXITCODE=99; valgrind's rules' own status else
	if [ $how = check-valgrind ]; then trs_expect t_leak FAIL; else trs_expect t_leak ERROR; fi
	# XFAIL_TESTS: the tool that fails on purpose and leaks is the
	# expected failure, the script that checks it passes; t_leak expected
	# to fail (xleak.sh) exits 0 and leaks: ERROR, not the XFAIL 23 made
	# it (bare, and unchecked under valgrind's --trace-children=no: XPASS)
	trs_expect t_reject XFAIL
	trs_expect expect.sh PASS
	if [ $how = check-valgrind ]; then trs_expect xleak.sh XPASS; else trs_expect xleak.sh ERROR; fi
	trs_expect skip.sh SKIP
	trs_expect tap-clean.tap PASS
	trs_expect tap-leak.tap PASS ERROR
	# a script with automake's default extension, .test, is run by
	# TEST_LOG_COMPILER alone: LOG_COMPILER there wrapped nothing, and
	# it passed with its leak (libucl's suite, session 58)
	if [ $how != check-valgrind ]; then trs_expect leak.test ERROR; fi
	# a cleared environment (env -i) followed, but not by valgrind's
	# command line (--trace-children=no)
	if [ $how = check-valgrind ]; then trs_expect envi.sh PASS; else trs_expect envi.sh ERROR; fi
	if [ $how = LOG_COMPILER ]; then
		# memcheck run fails a shell script's test that ignores its
		# leaking program's status; the harness runs every test and
		# sums them up: the six errors (the leak, env -i's, ignore.sh,
		# xleak.sh, leak.test and the TAP test's), no failure, the
		# expected one
		trs_expect ignore.sh ERROR
		expect "$WORK/automake-$how.log" '^# FAIL: +0$' "automake -j4: no test failed"
		expect "$WORK/automake-$how.log" '^# ERROR: +6$' "automake -j4: six errors"
		expect "$WORK/automake-$how.log" '^# XFAIL: +1$' "automake -j4: the expected failure"
		expect "$WORK/automake-$how.log" '^ERROR: ignore\.sh$' "automake -j4: ignore.sh named"
	fi
	expect "$A/t_leak.log" 'definitely lost in loss record 1 of 1' "automake $how: the leak in its log"
done

# GNU Autotest (testsuite.at), run by a rule of the project's own
# (check-autotest here, gdbm's check-local): neither LOG_COMPILER nor
# AM_TESTS_ENVIRONMENT reaches its groups (the
# leak passed under them, gdbm 1.23, session 59); preloaded in make
# check's environment, or given to the script as Autotest's VAR=VALUE
# argument, the leaking group fails and the skip skips.  AT_CHECK
# compares standard error too: memcheck's text there fails the group of
# the tool that fails on purpose and leaks, MEMCHECK_LOG does not.
# at_expect LOG GROUP RESULT: the testsuite's line for the group.
at_expect() {
	expect "$1" "^ *[0-9]+: $2 +$3" "autotest $how: $2 $3"
}
PRELOAD=$(pkg-config --variable=preload memcheck)
for how in wrappers preload preload-log argument; do
	rm -rf "$A"/testsuite.log "$A"/testsuite.dir "$WORK"/autotest-log
	L=$WORK/autotest-$how.log
	case $how in
	wrappers) (cd "$A" && make check-autotest LOG_COMPILER="memcheck run -q --" \
		AM_TESTS_ENVIRONMENT="LD_PRELOAD=$PRELOAD MEMCHECK_EXITCODE=99; export LD_PRELOAD MEMCHECK_EXITCODE;") >"$L" 2>&1;;
	preload) (cd "$A" && LD_PRELOAD=$PRELOAD make check-autotest) >"$L" 2>&1;;
	preload-log) mkdir -p "$WORK"/autotest-log
		(cd "$A" && LD_PRELOAD=$PRELOAD MEMCHECK_LOG="$WORK"/autotest-log/%p make check-autotest) >"$L" 2>&1;;
	argument) (cd "$A" && make testsuite >/dev/null && ./testsuite LD_PRELOAD="$PRELOAD") >"$L" 2>&1;;
	esac
	at_expect "$L" clean ok
	at_expect "$L" skip skipped
	case $how in
	wrappers) at_expect "$L" leak ok
		at_expect "$L" reject ok;;
	preload-log) at_expect "$L" leak FAILED
		at_expect "$L" reject ok;;
	*) at_expect "$L" leak FAILED
		at_expect "$L" reject FAILED
		expect "$A/testsuite.log" 'exit code was 23, expected 0' "autotest $how: the leak's status in testsuite.log"
		expect "$A/testsuite.log" 'definitely lost in loss record 1 of 1' "autotest $how: the leak's record in testsuite.log";;
	esac
done

if [ -n "$failed" ]; then
	echo "drivers-check: failed:$failed"
	exit 1
fi
echo "drivers-check: ctest -T memcheck, ctest, cmocka, Criterion, CUnit, meson, automake+libtool and GNU Autotest" \
	"report the leak as a failed test, the clean test as passed, the skip as skipped"
