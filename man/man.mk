# man.mk - included by GNUmakefile: the manual pages and their checks.
#
#   make man        rewrite the option list in man/man7/memcheck.7 from
#                   lib/options.def (the lines between .\" BEGIN OPTIONS
#                   and .\" END OPTIONS)
#   make doc-check  lint every page with mandoc, check that the option
#                   list is current and that every public function of
#                   include/memcheck/*.h is named by some page

MAN_SRC  := $(sort $(wildcard man/man[1-9]/*.[1-9]))
# memcheck.h first: a function is listed with the header that declares it.
MAN_HDRS := $(filter %/memcheck.h,$(wildcard include/memcheck/*.h)) \
	$(sort $(filter-out %/memcheck.h,$(wildcard include/memcheck/*.h)))
MAN_B    := $(B)/man
MAN_GEN  := $(MAN_B)/gen-options
MAN_OPTS := $(MAN_B)/options.mdoc
MAN_M7   := $(MAN_B)/memcheck.7

.PHONY: man doc-lint doc-options doc-api

$(MAN_B):
	mkdir -p $@

# The generator: mc_options_mdoc() from the library's own option table.
$(MAN_GEN): man/gen-options.c lib/options.c $(UTIL:%=lib/%.c) lib/options.def \
		lib/internal.h include/memcheck/memcheck.h | $(MAN_B)
	$(CC) $(BASE) -O1 -o $@ man/gen-options.c lib/options.c $(UTIL:%=lib/%.c)

# mc_options_mdoc() writes one sentence per line, as mdoc wants.
$(MAN_OPTS): $(MAN_GEN)
	@echo "GEN $@"
	@$(MAN_GEN) > $@.tmp
	@mv $@.tmp $@

# memcheck.7 with the list spliced between the marker lines.
$(MAN_M7): man/man7/memcheck.7 $(MAN_OPTS)
	@echo "GEN $@"
	@MB='.\" BEGIN OPTIONS' ME='.\" END OPTIONS' awk -v list=$(MAN_OPTS) ' \
		$$0 == ENVIRON["ME"] { skip = 0; e++ } \
		!skip { print } \
		$$0 == ENVIRON["MB"] { while ((getline l < list) > 0) print l; skip = 1; b++ } \
		END { if (b != 1 || e != 1 || skip) { \
			print "man/man7/memcheck.7: needs one .\\\" BEGIN OPTIONS line and, after it, one .\\\" END OPTIONS line" > "/dev/stderr"; \
			exit 1 } }' man/man7/memcheck.7 > $@.tmp
	@mv $@.tmp $@

man: $(MAN_M7)
	@if cmp -s $(MAN_M7) man/man7/memcheck.7; then \
		echo "man/man7/memcheck.7: option list is current"; \
	else \
		cp $(MAN_M7) man/man7/memcheck.7; \
		echo "man/man7/memcheck.7: option list updated"; \
	fi

doc-check: doc-lint doc-options doc-api

doc-lint:
	@command -v mandoc >/dev/null || { \
		echo "doc-check: mandoc not found (Debian package mandoc; make deps)"; exit 1; }
	@out=$$(mandoc -Tlint -Wwarning $(MAN_SRC) 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] || [ -n "$$out" ]; then \
		printf '%s\n' "$$out"; \
		echo "doc-check: mandoc -Tlint -Wwarning is not clean"; exit 1; \
	fi; \
	echo "doc-check: $(words $(MAN_SRC)) pages lint clean"

doc-options: $(MAN_M7)
	@if ! cmp -s $(MAN_M7) man/man7/memcheck.7; then \
		diff -u man/man7/memcheck.7 $(MAN_M7); \
		echo "doc-check: the option list in man/man7/memcheck.7 is not what lib/options.def says: run \`make man\` to update"; \
		exit 1; \
	fi; \
	echo "doc-check: memcheck.7 option list matches lib/options.def"

# Public functions: every name memcheck_*( or ck_assert_memcheck_*( in the
# installed headers, comments left out, must be an .Nm of some page's
# NAME section.
doc-api:
	@documented=$$(awk '/^\.Sh /{ n = ($$2 == "NAME") } n && /^\.Nm /{ print $$2 }' $(MAN_SRC) | sort -u); \
	missing=$$(for h in $(MAN_HDRS); do \
		{ $(CC) -fpreprocessed -dD -E -P -x c $$h 2>/dev/null || cat $$h; } | \
			grep -oE '\<[a-z_]*memcheck_[a-z0-9_]+[[:space:]]*\(' | \
			sed -E "s|[[:space:]]*\($$| $$h|"; \
		done | awk '{ if (!($$1 in h)) { h[$$1] = $$2; o[n++] = $$1 } } \
			END { for (i = 0; i < n; i++) print o[i], h[o[i]] }' | \
		while read f h; do \
			printf '%s\n' $$documented | grep -qx "$$f" || \
				echo "doc-check: $$f() ($$h) is not in the NAME section of any page in man/"; \
		done); \
	if [ -n "$$missing" ]; then printf '%s\n' "$$missing"; exit 1; fi; \
	echo "doc-check: every public function in $(MAN_HDRS) is named by a page"
