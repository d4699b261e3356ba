# tools.mk - included by GNUmakefile: the memcheck command, build/memcheck.
#
# Built from tools/*.c and the library files it shares (the report reader,
# the budget parser and checker, the suppression parser, util), compiled
# apart from the library's objects: no -fvisibility=hidden, no
# interposition; the CLI is an ordinary program.

CLI_SRC := $(wildcard tools/*.c)
CLI_LIB := json budget budget_check util suppress programs options
CLI_OBJ := $(CLI_SRC:tools/%.c=$(B)/cli/%.o) $(CLI_LIB:%=$(B)/cli/lib_%.o)
# Where Debian puts the allocators memcheck knows by name, and where an
# installed libmemcheck.so.0 is when it is not at ../lib from the binary.
CLI_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
CLI_DEFS := -DMC_ALLOCATOR_DIR='"/usr/lib$(if $(CLI_MULTIARCH),/$(CLI_MULTIARCH))"' \
	-DMC_LIBDIR='"$(LIBDIR)"' -DMC_DATADIR='"$(DATADIR)"'
CLI_FLAGS := $(BASE) -Itools $(CLI_DEFS)

$(B)/cli:
	mkdir -p $@

$(B)/cli/%.o: tools/%.c | $(B)/cli
	$(CC) $(CLI_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(B)/cli/lib_%.o: lib/%.c | $(B)/cli
	$(CC) $(CLI_FLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/memcheck: $(CLI_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) -lm

-include $(wildcard $(B)/cli/*.d)

# `make` builds the command too; the whole-program tests run it, and
# test_cli runs it on tests/prog/cli_prog.
all: $(B)/memcheck
prog-check: $(B)/memcheck
$(B)/tests/test_cli: $(B)/memcheck $(B)/tests/prog/cli_prog
# test_oom sweeps tests/prog/plain_oom with `memcheck oom`.
$(B)/tests/test_oom: $(B)/memcheck $(B)/tests/prog/plain_oom

BINDIR ?= $(PREFIX)/bin
.PHONY: install-cli
install: install-cli
install-cli: $(B)/memcheck
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(B)/memcheck $(DESTDIR)$(BINDIR)/
# test_suppress runs `memcheck run --suppressions` on tests/prog/plain_supp.
$(B)/tests/test_suppress: $(B)/memcheck $(B)/tests/prog/plain_supp
