# tools.mk - included by GNUmakefile: the memcheck command, build/memcheck.
#
# Built from tools/*.c and the library files it shares (the report reader,
# the budget parser and checker, the suppression parser, util), compiled
# apart from the library's objects: no -fvisibility=hidden, no
# interposition; the CLI is an ordinary program.

CLI_SRC := $(wildcard tools/*.c)
CLI_LIB := json budget budget_check $(UTIL) suppress programs options
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

# The command's files call down the layers of tools/layers.txt (tools/layers.sh
# says how it is checked).  The check is run a second time on the same
# symbols with an upward call (helpers.c -> cmd_run) and a circle
# (records.c <-> detail.c) added: it must fail on both, or it checks
# nothing.
.PHONY: tools-layers-check
check: tools-layers-check
tools-layers-check: $(CLI_OBJ) tools/layers.txt tools/layers.sh
	@nm -A $(CLI_OBJ) | sh tools/layers.sh tools/layers.txt
	@{ nm -A $(CLI_OBJ); echo '$(B)/cli/helpers.o: U cmd_run'; \
		echo '$(B)/cli/records.o: U detail_read'; echo '$(B)/cli/detail.o: U recs_read'; } | \
		sh tools/layers.sh tools/layers.txt >$(B)/cli/layers-selftest.out || true; \
	grep -q 'upward call: tools/helpers.c .*cmd_run' $(B)/cli/layers-selftest.out && \
	grep -q 'circle of files: .*detail_read' $(B)/cli/layers-selftest.out || \
		{ cat $(B)/cli/layers-selftest.out; \
		  echo "tools-layers-check: an added upward call or circle went unnoticed"; exit 1; }

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
