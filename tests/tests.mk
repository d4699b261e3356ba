# tests.mk - included by GNUmakefile.
#
# Unit tests (tests/unit_<area>.c) test one lib/<area>.c directly with the
# check framework; they link only the objects they name, never the
# interposer, so they also run under ASan/UBSan.
# Whole-program tests (tests/test_*.c) run the programs in tests/prog/
# under the preloaded library and read its JSON report.

CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt -pthread)
TEST_CFLAGS := $(BASE) -O1 -g -pthread -fno-omit-frame-pointer

# unit test -> the library objects it needs (without the build dir prefix)
UNIT_util      := $(UTIL) options
UNIT_blocks    := blocks snapshot depot $(UTIL)
UNIT_stacks    := stacks depot cfi ownread elfsym dlstate rss dlclose $(UTIL)
UNIT_symbolize := $(SYMBOLIZE) symcache symtab elfmod resident ownread elfsym dlstate $(UTIL)
UNIT_rss       := rss $(UTIL)
UNIT_json      := json $(UTIL) programs options
UNIT_budget    := budget budget_check $(UTIL)
UNIT_scan      := scan scanpool roots glibcarena heuristics threads rss maps resident ownread blocks snapshot depot elfsym $(UTIL)
UNIT_supp      := suppress $(UTIL)
UNIT_resident  := resident ownread $(UTIL)
UNIT_elfsym    := elfsym $(UTIL)
UNIT_footprint := footprint startpages ownread seccomp $(UTIL)
UNIT_ownread   := ownread resident $(UTIL)
UNIT_ownheap   := ownheap $(UTIL)
UNIT_symcache  := symcache $(UTIL)
# extra flags for a unit test's own file and link
UNIT_FLAGS_elfsym := -no-pie -fno-pie
# unit_scan counts the walks of the loaded objects (libc_facts_two_walks)
UNIT_FLAGS_scan := -Wl,--wrap=dl_iterate_phdr

# h_tcase and h_run_suite, every test program's main (tests/suite.h)
SUITE_SRC := tests/suite.c tests/suite.h

UNIT_TESTS := $(patsubst tests/unit_%.c,%,$(wildcard tests/unit_*.c))
UNIT_BINS  := $(UNIT_TESTS:%=$(B)/tests/unit_%)
ASAN_BINS  := $(UNIT_TESTS:%=$(B)/asan/unit_%)
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# Unit objects are built apart from the library's: without -fvisibility
# and, for ASan, instrumented.
$(B)/tests/lib_%.o: lib/%.c | $(B)/tests
	$(CC) $(TEST_CFLAGS) -fno-builtin -MMD -MP -c $< -o $@
$(B)/asan/lib_%.o: lib/%.c | $(B)/asan
	$(CC) $(TEST_CFLAGS) $(ASAN_FLAGS) -fno-builtin -MMD -MP -c $< -o $@

.SECONDARY:
.SECONDEXPANSION:
$(B)/tests/unit_%: tests/unit_%.c $(SUITE_SRC) $$(addprefix $(B)/tests/lib_,$$(addsuffix .o,$$(UNIT_$$*))) | $(B)/tests
	$(CC) $(TEST_CFLAGS) $(UNIT_FLAGS_$*) -o $@ $(filter-out %.h,$^) $(CHECK_LIBS) -ldl
$(B)/asan/unit_%: tests/unit_%.c $(SUITE_SRC) $$(addprefix $(B)/asan/lib_,$$(addsuffix .o,$$(UNIT_$$*))) | $(B)/asan
	$(CC) $(TEST_CFLAGS) $(ASAN_FLAGS) $(UNIT_FLAGS_$*) -o $@ $(filter-out %.h,$^) $(CHECK_LIBS) -ldl

# Programs run under memcheck: no builtins (the compiler would delete
# malloc/free pairs), frame pointers and debug info for exact stacks.
PROG_SRC  := $(wildcard tests/prog/*.c)
PROG_BINS := $(PROG_SRC:tests/prog/%.c=$(B)/tests/prog/%)
# -MMD -MP: a program is built again when a header of tests/prog it
# includes changes (rss_self.h, plain_leak_common.h, ...), not only its .c
PROG_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g \
	-fno-builtin -fno-omit-frame-pointer -fno-inline -pthread -Iinclude -MMD -MP
-include $(wildcard $(B)/tests/prog/*.d)
$(B)/tests/prog/%: tests/prog/%.c $(B)/libmemcheck.so include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck -ldl
# tests/prog/plain_*.c are not linked to memcheck: they meet it only
# through LD_PRELOAD, as an unmodified program would (and run under
# valgrind without it).
$(B)/tests/prog/plain_%: tests/prog/plain_%.c include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -ldl
# C++ programs (tests/test_cxx.c), not linked to memcheck: without
# allocation elision, so every new and delete is a call.
CXX ?= g++
PROG_CXXFLAGS := -std=gnu++17 -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer \
	-fno-inline -fno-allocation-dce -MMD -MP
CXX_PROG_BINS := $(patsubst tests/prog/%.cc,$(B)/tests/prog/%,$(wildcard tests/prog/*.cc))
$(B)/tests/prog/%: tests/prog/%.cc | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(PROG_CXXFLAGS) -o $@ $<
# cxx_names again at -O2 with inlining (tests/test_cxxnames.c): the
# frames valgrind names by DW_AT_name alone.
CXX_PROG_BINS += $(B)/tests/prog/cxx_names_o2
$(B)/tests/prog/cxx_names_o2: tests/prog/cxx_names.cc | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(filter-out -O1 -fno-inline,$(PROG_CXXFLAGS)) -O2 -o $@ $<
# A gtest program at -O2 (tests/test_cxxnames.c), where gtest is
# installed: gtest's frames, and its main without debug information.
ifneq ($(wildcard /usr/include/gtest/gtest.h),)
CXX_PROG_BINS += $(B)/tests/prog/cxx_gtest_o2
$(B)/tests/prog/cxx_gtest_o2: tests/prog/gtest/cxx_gtest.cc | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(filter-out -O1 -fno-inline,$(PROG_CXXFLAGS)) -O2 -o $@ $< -lgtest_main -lgtest -pthread
# A gtest suite under memcheck/gtest.h (tests/test_frameworks.c), linked
# with memcheck as the other frameworks' suites are.
CXX_PROG_BINS += $(B)/tests/prog/fw_gtest
$(B)/tests/prog/fw_gtest: tests/prog/gtest/fw_gtest.cc include/memcheck/gtest.h \
		include/memcheck/memcheck.h $(B)/libmemcheck.so | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(PROG_CXXFLAGS) -Iinclude -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck \
		-lgtest_main -lgtest -pthread
endif
# Catch2 (2.x, catch.hpp) and doctest suites under memcheck/catch2.h and
# memcheck/doctest.h (tests/test_frameworks.c), where the framework is
# installed: both header-only, each suite a main of the framework's own.
FW_CXX_GLUE := tests/prog/fw_site.h include/memcheck/glue.h include/memcheck/memcheck.h \
	$(B)/libmemcheck.so
ifneq ($(wildcard /usr/include/catch2/catch.hpp),)
CXX_PROG_BINS += $(B)/tests/prog/fw_catch2
$(B)/tests/prog/fw_catch2: tests/prog/catch2/fw_catch2.cc include/memcheck/catch2.h $(FW_CXX_GLUE) \
		| $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(PROG_CXXFLAGS) -DMEMCHECK_GLUE -Iinclude -o $@ $< -L$(B) \
		-Wl,-rpath,'$$ORIGIN/../..' -lmemcheck
endif
ifneq ($(wildcard /usr/include/doctest/doctest.h),)
CXX_PROG_BINS += $(B)/tests/prog/fw_doctest
$(B)/tests/prog/fw_doctest: tests/prog/doctest/fw_doctest.cc include/memcheck/doctest.h \
		$(FW_CXX_GLUE) | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(PROG_CXXFLAGS) -DMEMCHECK_GLUE -Iinclude -o $@ $< -L$(B) \
		-Wl,-rpath,'$$ORIGIN/../..' -lmemcheck
endif
# Non-PIE builds that take the allocation functions' addresses
# (tests/test_nopie.c): canonical PLT entries in the program.
NOPIE_BINS := $(B)/tests/prog/plain_nopie $(B)/tests/prog/cxx_new_nopie
$(B)/tests/prog/plain_nopie: tests/prog/plain_nopie.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -no-pie -fno-pie -o $@ $<
$(B)/tests/prog/cxx_new_nopie: tests/prog/cxx_new.cc | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CXX) $(PROG_CXXFLAGS) -no-pie -fno-pie -o $@ $<
# The floor test_fidelity compares memcheck with: a preload that only
# forwards malloc, calloc, realloc and free (bench/null_interpose.c).
NULL_SO := $(B)/tests/libnull_interpose.so
$(NULL_SO): bench/null_interpose.c bench/next.h bench/boot.h | $(B)/tests
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -fno-builtin -o $@ $< -ldl

# plain_phases again, linked, with a region per phase (test_ownmem).
PROG_BINS += $(B)/tests/prog/phases_regions
$(B)/tests/prog/phases_regions: tests/prog/plain_phases.c $(B)/libmemcheck.so include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -DWITH_REGIONS -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck -ldl
# Built as libevent builds (tests/test_stacks.c): no frame pointers, its
# segments aligned to 16 KiB, which moves .eh_frame_hdr out of the range
# _dl_find_object gives the main program (lib/cfi.c).
BIGPAGE_PROG := $(B)/tests/prog/plain_bigpage_stacks
$(BIGPAGE_PROG): $(B)/tests/prog/%: tests/prog/%.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -fomit-frame-pointer -Wl,-z,max-page-size=16384 -o $@ $<
# Check suites, not linked to memcheck either (tests/test_vgsupp.c,
# tests/test_checkfork.c): a static pattern rule, which wins over plain_%.
CHECK_PROGS := $(B)/tests/prog/plain_check $(B)/tests/prog/plain_check_fork
$(CHECK_PROGS): $(B)/tests/prog/%: tests/prog/%.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< $(CHECK_LIBS)

# A setuid copy of this one runs from a directory of the test's own,
# where the loader of a setuid program would not look for the shared
# library ($ORIGIN and LD_LIBRARY_PATH are ignored there): linked with
# the archive.
$(B)/tests/prog/suid: tests/prog/suid.c $(ARLIB) include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< $(ARLIB) -ldl -pthread

# The leak corpus (tests/test_corpus.c): programs of the shapes real
# code has, built as real code is (-O2, no frame pointers asked for),
# not linked to memcheck, and the libraries some of them dlopen.
CORPUS_SRC  := $(wildcard tests/prog/corpus/*.c)
CORPUS_BINS := $(CORPUS_SRC:tests/prog/corpus/%.c=$(B)/tests/prog/corpus/%)
CORPUS_LIBS := $(patsubst tests/prog/corpus/lib/%.c,$(B)/tests/prog/corpus/libcorpus_%.so,\
	$(wildcard tests/prog/corpus/lib/*.c))
CORPUS_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -fno-builtin -pthread
$(CORPUS_BINS): $(B)/tests/prog/corpus/%: tests/prog/corpus/%.c tests/prog/corpus/corpus.h | $(B)/tests
	@mkdir -p $(B)/tests/prog/corpus
	$(CC) $(CORPUS_CFLAGS) -o $@ $< -ldl
$(CORPUS_LIBS): $(B)/tests/prog/corpus/libcorpus_%.so: tests/prog/corpus/lib/%.c | $(B)/tests
	@mkdir -p $(B)/tests/prog/corpus
	$(CC) $(CORPUS_CFLAGS) -fPIC -shared -o $@ $<
# A check suite linked with memcheck (memcheck_tcase): check's libraries
# too.
$(B)/tests/prog/check_tcase: tests/prog/check_tcase.c $(B)/libmemcheck.so include/memcheck/check.h \
		include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck $(CHECK_LIBS)

# Suites of test frameworks, linked with memcheck and the framework
# (tests/test_frameworks.c).
FW_LIBS_check := $(CHECK_LIBS)
FW_LIBS_cmocka := -lcmocka
FW_LIBS_criterion := -lcriterion
$(B)/tests/prog/fw_%: tests/prog/fw_%.c include/memcheck/%.h $(B)/libmemcheck.so | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck $(FW_LIBS_$*)

# A CUnit suite under memcheck/cunit.h, where CUnit is installed.
ifneq ($(wildcard /usr/include/CUnit/CUnit.h),)
PROG_BINS += $(B)/tests/prog/fw_cunit
$(B)/tests/prog/fw_cunit: tests/prog/cunit/fw_cunit.c include/memcheck/cunit.h \
		include/memcheck/glue.h include/memcheck/memcheck.h $(B)/libmemcheck.so | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck -lcunit
endif

# A Criterion suite met only through LD_PRELOAD (tests/test_audit25b.c).
$(B)/tests/prog/plain_audit25b_criterion: tests/prog/plain_audit25b_criterion.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -lcriterion

# A Criterion suite with a leaking test, met only through LD_PRELOAD
# (tests/test_descend.c).
$(B)/tests/prog/plain_descend_criterion: tests/prog/plain_descend_criterion.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -lcriterion

# Linked as libevent links its programs: segments aligned to 16 KiB, the
# text 0x4000 into the file (tests/test_audit26.c).
$(B)/tests/prog/plain_audit26_pagealign: tests/prog/plain_audit26_pagealign.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -Wl,-z,max-page-size=16384 -o $@ $<

# exitregion again, linked with the static archive: memcheck's
# constructor then runs after the program's start-up registered its exit
# handlers (tests/test_exitcode.c).
PROG_BINS += $(B)/tests/prog/exitregion_static
$(B)/tests/prog/exitregion_static: tests/prog/exitregion.c $(ARLIB) include/memcheck/memcheck.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< $(ARLIB) -ldl

# plain_seccomp linked with the static archive (tests/test_sandbox.c):
# memcheck's code and the program's are one object, whose own syscall(2)
# must still reach the kernel as without memcheck.
PROG_BINS += $(B)/tests/prog/seccomp_static
$(B)/tests/prog/seccomp_static: tests/prog/plain_seccomp.c $(ARLIB) | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< $(ARLIB) -ldl

# plain_allocfn at -O0 and -O2 besides -O1 (tests/test_allocfn.c): the
# code after a wrapper's call, which memcheck reads, is the compiler's.
# (static patterns: the .d files -MMD writes beside them, which make
# tries to remake as included makefiles, are no targets of theirs)
$(B)/tests/prog/plain_allocfn_o0 $(B)/tests/prog/plain_allocfn_o2: \
$(B)/tests/prog/plain_allocfn_o%: tests/prog/plain_allocfn.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(filter-out -O1 -fno-inline,$(PROG_CFLAGS)) -O$* -o $@ $< -ldl
# (before prog-check's rule: its prerequisites are expanded where it stands)
PROG_BINS += $(B)/tests/prog/plain_allocfn_o0 $(B)/tests/prog/plain_allocfn_o2
# plain_voidtest likewise: a runner's void tests at each level.
$(B)/tests/prog/plain_voidtest_o0 $(B)/tests/prog/plain_voidtest_o2: \
$(B)/tests/prog/plain_voidtest_o%: tests/prog/plain_voidtest.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(filter-out -O1 -fno-inline,$(PROG_CFLAGS)) -O$* -o $@ $< -ldl
PROG_BINS += $(B)/tests/prog/plain_voidtest_o0 $(B)/tests/prog/plain_voidtest_o2
# plain_leak_stripped without a symbol table, as installed programs are.
$(B)/tests/prog/plain_leak_stripped: tests/prog/plain_leak_stripped.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -s -o $@ $< -ldl
# A shim preloaded after memcheck that logs its calls on the cache
# directory (tests/test_symcache.c); in a directory of its own, out of
# PROG_SRC's programs.
PROG_BINS += $(B)/tests/prog/libcount_calls.so
$(B)/tests/prog/libcount_calls.so: tests/prog/shim/count_calls.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# A shim preloaded after memcheck that opens files between memcheck's
# calls of close_range (tests/test_harden.c, plain_closeall between).
PROG_BINS += $(B)/tests/prog/libopens_between.so
$(B)/tests/prog/libopens_between.so: tests/prog/shim/opens_between.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# A shim preloaded before memcheck whose constructor writes a page of the
# C library's code in place (tests/test_rss_self.c, plain_patched).
PROG_BINS += $(B)/tests/prog/libpatch_libc.so
$(B)/tests/prog/libpatch_libc.so: tests/prog/shim/patch_libc.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(BASE) -O2 -g -fPIC -shared -fvisibility=hidden -o $@ $< -ldl

# The library plain_leak_dlclosed opens, leaks from and closes
# (tests/test_leakkinds.c), beside it.
PROG_BINS += $(B)/tests/prog/libleak_dlclosed.so
$(B)/tests/prog/libleak_dlclosed.so: tests/prog/shim/leak_dlclosed.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(filter-out -MMD -MP,$(PROG_CFLAGS)) -fPIC -shared -o $@ $<

# Copies of a library with TLS that plain_dtv_last dlopens one after
# another (tests/test_leakkinds.c), beside it: each copy a TLS module of
# its own, the last ones past the DTV's spare entries of the thread it
# started before.
TLS_SLOTS := $(foreach n,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24,\
	$(B)/tests/prog/libtls_slot$(n).so)
PROG_BINS += $(TLS_SLOTS)
$(TLS_SLOTS): $(B)/tests/prog/libtls_slot%.so: tests/prog/shim/tls_slot.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(filter-out -MMD -MP,$(PROG_CFLAGS)) -fPIC -shared -o $@ $<
$(B)/tests/prog/plain_dtv_last: $(TLS_SLOTS)
# plain_libc_threads tls-*: the first copy, dlopened before a timer's threads
$(B)/tests/prog/plain_libc_threads: $(B)/tests/prog/libtls_slot1.so

# The two libraries regions_dlswap opens one after the other at one
# address (tests/test_stacks.c), beside it: one source, two names.
PROG_BINS += $(B)/tests/prog/libswap_a.so $(B)/tests/prog/libswap_b.so
$(B)/tests/prog/libswap_%.so: tests/prog/shim/swap_make.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(filter-out -MMD -MP,$(PROG_CFLAGS)) -DSWAP_NAME=swap_$*_make -fPIC -shared -o $@ $<

# A library whose destructor frees a block (tests/test_exitorder25.c),
# and the program that links it (and, dtorfree_linked, memcheck too).
PROG_BINS += $(B)/tests/prog/libdtorfree.so $(B)/tests/prog/dtorfree_linked
$(B)/tests/prog/libdtorfree.so: tests/prog/shim/dtorfree.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<
$(B)/tests/prog/plain_dtorfree: tests/prog/plain_dtorfree.c $(B)/tests/prog/libdtorfree.so | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' -ldtorfree
$(B)/tests/prog/dtorfree_linked: tests/prog/plain_dtorfree.c $(B)/tests/prog/libdtorfree.so $(B)/libmemcheck.so | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' \
		-Wl,-rpath,'$$ORIGIN/../..' -lmemcheck -ldtorfree -ldl

# A library whose constructor fills glibc's static list of exit functions
# before libmemcheck's runs, and the program that links it
# (tests/test_wrapper.c's exit-function list rows).
PROG_BINS += $(B)/tests/prog/libexitfn.so
$(B)/tests/prog/libexitfn.so: tests/prog/shim/exitfn.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<
$(B)/tests/prog/plain_exitfn: tests/prog/plain_exitfn.c $(B)/tests/prog/libexitfn.so | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' -Wl,--no-as-needed \
		-lexitfn -Wl,--as-needed
# The same program linked with libmemcheck after libexitfn (libexitfn's
# constructor runs after memcheck's: its handlers registered between
# memcheck's constructor and the program's start), and with the static
# archive (memcheck's constructor inside the program's start).
PROG_BINS += $(B)/tests/prog/exitfn_linked $(B)/tests/prog/exitfn_static
$(B)/tests/prog/exitfn_linked: tests/prog/plain_exitfn.c $(B)/tests/prog/libexitfn.so $(B)/libmemcheck.so | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' \
		-Wl,-rpath,'$$ORIGIN/../..' -Wl,--no-as-needed -lexitfn -lmemcheck -Wl,--as-needed
$(B)/tests/prog/exitfn_static: tests/prog/plain_exitfn.c $(B)/tests/prog/libexitfn.so $(ARLIB) | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< $(ARLIB) -ldl -pthread -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' \
		-Wl,--no-as-needed -lexitfn -Wl,--as-needed

# A library whose destructor writes what the program asked for, and the
# program that links it (tests/test_rss_self.c's "exit code" row).
PROG_BINS += $(B)/tests/prog/librss_exit.so
$(B)/tests/prog/librss_exit.so: tests/prog/shim/rss_exit.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -fPIC -shared -o $@ $<
$(B)/tests/prog/plain_rss_exit: tests/prog/plain_rss_exit.c $(B)/tests/prog/librss_exit.so | $(B)/tests
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B)/tests/prog -Wl,-rpath,'$$ORIGIN' -lrss_exit

# A GLib program (tests/test_rss_self.c), where GLib is installed: its
# libraries have no frame pointers, so memcheck's stacks read their
# call-frame tables.
GLIB_FLAGS := $(shell pkg-config --cflags --libs gobject-2.0 2>/dev/null)
ifneq ($(GLIB_FLAGS),)
PROG_BINS += $(B)/tests/prog/rss_self_glib
$(B)/tests/prog/rss_self_glib: tests/prog/glib/rss_self_glib.c tests/prog/rss_self.h | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -Itests/prog -o $@ $< $(GLIB_FLAGS)
# GObject's start-up frames named as valgrind names them
# (tests/test_trial_aliases.c).
PROG_BINS += $(B)/tests/prog/plain_glib_ctor
$(B)/tests/prog/plain_glib_ctor: tests/prog/glib/plain_glib_ctor.c | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< $(GLIB_FLAGS)
# A GLib test program under memcheck/glib.h (tests/test_frameworks.c),
# linked with memcheck as the other frameworks' suites are.
PROG_BINS += $(B)/tests/prog/fw_glib
$(B)/tests/prog/fw_glib: tests/prog/glib/fw_glib.c include/memcheck/glib.h \
		include/memcheck/memcheck.h $(B)/libmemcheck.so | $(B)/tests
	@mkdir -p $(B)/tests/prog
	$(CC) $(PROG_CFLAGS) -o $@ $< -L$(B) -Wl,-rpath,'$$ORIGIN/../..' -lmemcheck $(GLIB_FLAGS)
endif

WP_SRC  := $(wildcard tests/test_*.c)
WP_BINS := $(WP_SRC:tests/%.c=$(B)/tests/%)
HARNESS_SRC := tests/harness.c tests/harness_xml.c tests/suite.c
$(B)/tests/test_%: tests/test_%.c $(HARNESS_SRC) tests/harness.h tests/suite.h lib/allocators.def | $(B)/tests
	$(CC) $(TEST_CFLAGS) -o $@ $< $(HARNESS_SRC) $(CHECK_LIBS)

-include $(wildcard $(B)/tests/*.d $(B)/asan/*.d)

unit-check: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

asan-check: $(ASAN_BINS)
	@set -e; for t in $(ASAN_BINS); do echo "== $$t (ASan/UBSan)"; \
		ASAN_OPTIONS=detect_leaks=1 $$t; done

# Every test program runs even when one fails; the failures are named at
# the end, each with check's lines for its failed checks (a CI log may
# keep only its last lines).  Each program's output is also kept in
# build/tests/NAME.log, its status in NAME.rc until the summary.  One
# target a program (NAME.run), so that `make check`'s two jobs share
# them; the slowest first (seconds each on an idle machine, make check
# of 4 December: corpus 28, ownmem 26, oom 19, allocstats 19, vgsupp 16,
# wrapper 14, vgmode 14, leakkinds 12, leftout 10), so that the two
# jobs end together.
PROG_SLOW := corpus ownmem oom allocstats vgsupp wrapper vgmode leakkinds leftout
WP_ORDER := $(foreach s,$(PROG_SLOW),$(filter $(B)/tests/test_$(s),$(WP_BINS))) \
	$(filter-out $(PROG_SLOW:%=$(B)/tests/test_%),$(WP_BINS))
PROG_RUNS := $(WP_ORDER:%=%.run)
.PHONY: $(PROG_RUNS)
$(PROG_RUNS): %.run: % all $(PROG_BINS) $(CXX_PROG_BINS) $(NOPIE_BINS) $(NULL_SO) \
	$(CORPUS_BINS) $(CORPUS_LIBS)
	@echo "== $*"; rm -f $*.rc; \
		{ MEMCHECK_BUILD=$(CURDIR)/$(B) $*; echo $$? >$*.rc; } 2>&1 | tee $*.log
define prog_summary
	@fail=; for t in $(WP_BINS); do [ "$$(cat $$t.rc 2>/dev/null)" = 0 ] || \
		fail="$$fail $${t##*/}"; rm -f $$t.rc; done; \
	if [ -n "$$fail" ]; then for f in $$fail; do echo "== failed: $$f"; \
		grep -E ':[FE]:|^harness:' $(B)/tests/$$f.log | cut -c1-2000 | head -20; done; \
		echo "prog-check: failed:$$fail"; exit 1; fi; \
	echo "prog-check: $(words $(WP_BINS)) test programs passed"
endef
prog-check: $(PROG_RUNS)
	$(prog_summary)

# The library exports the public API and what it interposes: the malloc
# family, C++'s operator new and delete, the rlimit setters (limits.c),
# the signal-handler setters (signals.c), pthread_getattr_np
# (threadattr.c), pthread_create and thrd_create (threadstart.c), getrusage (rusage.c), _setjmp and
# __sigsetjmp (jmpbuf.c), the mmap family (mappings.c)
# and __libc_start_main (start.c); nothing else (internals are hidden:
# -fvisibility=hidden).
CXX_NEW := _Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t \
	_ZnwmSt11align_val_t _ZnamSt11align_val_t \
	_ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t \
	_ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t \
	_ZdlPvSt11align_val_t _ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t \
	_ZdaPvmSt11align_val_t _ZdlPvSt11align_val_tRKSt9nothrow_t \
	_ZdaPvSt11align_val_tRKSt9nothrow_t
EXPORTS := aligned_alloc calloc free malloc malloc_usable_size memalign \
	posix_memalign pvalloc realloc reallocarray valloc \
	setrlimit setrlimit64 prlimit prlimit64 getrlimit getrlimit64 \
	setuid setgid seteuid setegid setreuid setregid setresuid setresgid prctl syscall sigaction signal bsd_signal __sysv_signal sysv_signal sigset sigaltstack pthread_getattr_np pthread_create thrd_create getrusage getenv dlclose _setjmp __sigsetjmp $(CXX_NEW) \
	mmap mmap64 munmap mremap shmat shmdt sbrk brk __libc_start_main __cxa_atexit on_exit _exit _Exit quick_exit __cxa_at_quick_exit \
	close dup2 dup3 close_range closefrom fclose freopen freopen64 daemon \
	execve execv execvp execvpe execl execle execlp posix_spawn posix_spawnp system popen
# The pages of libmemcheck.so that the dynamic linker writes at load, in
# every process it is loaded into (a left-out one too), are a page fault
# each (~20 us on these VMs): the relocations' targets lie on at most
# RELOC_PAGES pages.  (A table of pointers, such as options.c's was,
# adds relocations and relocated bytes; options.c's strings are offsets.)
# The relative ones are packed (DT_RELR): readelf lists their offsets,
# one a line, after the others.
RELOC_PAGES := 3
reloc-check: $(B)/libmemcheck.so
	@pages=$$(readelf -rW $(B)/libmemcheck.so | \
		awk '/^[0-9a-f]+( |$$)/ { p = substr($$1, 1, length($$1) - 3); if (!(p in s)) { s[p]; n++ } } \
		     END { print n + 0 }'); \
	if [ "$$pages" -gt $(RELOC_PAGES) ]; then \
		echo "reloc-check: the dynamic linker writes $$pages pages of libmemcheck.so at load (at most $(RELOC_PAGES))"; \
		exit 1; fi; \
	echo "reloc-check: the dynamic linker writes $$pages pages of libmemcheck.so at load"
exports-check: $(B)/libmemcheck.so
	@extra=$$(nm -D --defined-only $(B)/libmemcheck.so | awk '{ print $$3 }' | \
		grep -v '^memcheck_' | grep -vxF -e '$(subst $(eval) ,' -e ',$(strip $(EXPORTS)))'); \
	if [ -n "$$extra" ]; then echo "exports-check: libmemcheck.so exports more than its API:" $$extra; exit 1; fi; \
	missing=$$(for f in $(EXPORTS); do nm -D --defined-only $(B)/libmemcheck.so | \
		awk '{ print $$3 }' | grep -qx $$f || echo $$f; done); \
	if [ -n "$$missing" ]; then echo "exports-check: libmemcheck.so does not export:" $$missing; exit 1; fi; \
	echo "exports-check: libmemcheck.so exports memcheck_*, the malloc family, operator new and delete, the rlimit, user and group id and signal setters, prctl, syscall, pthread_getattr_np, pthread_create, thrd_create, getrusage, getenv, dlclose, _setjmp and __sigsetjmp, the mmap family, __libc_start_main, the exit-handler registrations (__cxa_atexit, on_exit, __cxa_at_quick_exit), _exit, _Exit and quick_exit, the calls that close descriptor 2, the exec and spawn calls that take an environment only"

# Allocation stacks start at the program's call because the wrappers
# jump, never call, to the functions that record (interpose.c,
# MC_FRAMELESS).  An unoptimized build must keep that: build everything
# at -O0 in a directory of its own and check the examples' leak stacks.
# Its library, in build/o0, finds no suppressions/ beside its parent
# directory: it is told where the shipped files are (SUPPDIR), as an
# installed copy is, for the allocators' start-up blocks the process
# region counts (tcmalloc's 8 bytes lost on purpose).
o0-check:
	@$(MAKE) --no-print-directory B=$(B)/o0 OPT=-O0 SUPPDIR=$(CURDIR)/suppressions \
		examples-check fp-check >$(B)/o0-check.log 2>&1 || \
		{ tail -20 $(B)/o0-check.log; echo "o0-check: the -O0 build fails examples-check" \
			"or fp-check"; exit 1; }
	@echo "o0-check: an -O0 build gets the examples' leak stacks right and keeps fp-check's premises"

# The stress test for minutes, not part of make check (which runs its
# short form, tests/test_stress with the defaults: the mix alone, 1 s a
# run): every round a seed of its own, each run STRESS_SECONDS long.
STRESS_SECONDS ?= 10
STRESS_ROUNDS  ?= 3
.PHONY: stress
stress: all $(PROG_BINS) $(B)/tests/test_stress
	MEMCHECK_BUILD=$(CURDIR)/$(B) STRESS_SECONDS=$(STRESS_SECONDS) \
		STRESS_ROUNDS=$(STRESS_ROUNDS) $(B)/tests/test_stress

# Test drivers and frameworks against an installed copy: CMake and CTest,
# meson, automake with libtool and a GNU Autotest suite, cmocka and
# Criterion (tests/drivers/).
# The prefix is not a system directory, as a user's own would be.  Its
# copy is built in a directory of its own: the prefix is compiled into
# the library (SUPPDIR), and installing from $(B) would relink
# $(B)/libmemcheck.so in place while make -j2 check's other targets run it.
DRIVERS := $(B)/drivers
.PHONY: drivers-check
drivers-check:
	@rm -rf $(DRIVERS)/prefix
	@$(MAKE) --no-print-directory B=$(DRIVERS)/build install PREFIX=$(CURDIR)/$(DRIVERS)/prefix >/dev/null
	@sh tests/drivers/check.sh $(CURDIR)/$(DRIVERS)/prefix $(CURDIR)/$(DRIVERS)/work

# The dynamic linker splits LD_PRELOAD at spaces and colons: from a tree
# whose path holds one, every run that preloads build/libmemcheck.so
# loaded nothing ("memcheck was bypassed" in each, from a copy at
# ".../deep dir/with spaces/...": all 42 programs of prog-check failed).
# Said once, before anything runs.
PRELOADING_GOALS := check check-parts prog-check examples-check o0-check drivers-check
h_space := $(subst ,, )
ifneq ($(filter $(PRELOADING_GOALS),$(MAKECMDGOALS)),)
ifneq ($(findstring $(h_space),$(CURDIR))$(findstring :,$(CURDIR)),)
$(error the tree's path "$(CURDIR)" holds a space or a colon, where the dynamic linker splits LD_PRELOAD: no test could preload $(B)/libmemcheck.so from it; move the tree to a path without them)
endif
endif

# check's parts, two at a time (CHECK_JOBS; 1: one after another, each
# part's output as it comes), each part's output in one piece
# (--output-sync): on CI's two processors they took 10 min one after
# another.  The longest single parts first; the test programs fill in
# beside them; their summary closes the output.  Under make -jN the
# jobs are the caller's.
CHECK_JOBS ?= 2
check:
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) \
		--output-sync=target check-parts
check-parts: asan-check drivers-check o0-check unit-check examples-check doc-check \
	install-check exports-check reloc-check fuzz-replay html-check $(PROG_RUNS)
	$(prog_summary)
.PHONY: check check-parts
