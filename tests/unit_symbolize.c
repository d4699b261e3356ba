/*
 * unit_symbolize.c - lib/symbolize.c and its parts (symbolize.h) on their own: the test's own frames
 * resolve to function, file and line through libdw; libc addresses to
 * libc; garbage addresses to "???" without crashing; MEMCHECK_SYMBOLIZE=0
 * falls back to dladdr; the C library's frames get the names libdw's own
 * dwfl_module_addrname gives, though memcheck searches its copy of the
 * symbol table; and elfmod.c, which reads the objects' files without
 * libdw, gives every object it takes libdw's names, path, bias and
 * whether it has debug information; and the frames of inlined code come
 * out as libdw's getscopes and getscopes_die give them, though memcheck
 * finds the scopes through its own table of each unit's functions.
 */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <dwarf.h>
#include <elf.h>
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"
#include "symtab.h"

/* symbolize.c reads the options; options.c is not linked. */
/* No cache of frames across processes (symcache.c): what is compared
 * with libdw here is libdw's reading, and the home directory is left
 * alone. */
struct mc_options mc_opt = { .cache = "off" };
/* forward.c is not linked either: libdw's blocks are the C library's here. */
void mc_forward_free(void *p)
{
	free(p);
}

static uintptr_t recorded_pc;

/* noipa: a clone (call_site.constprop.0) would not carry the name the
 * test looks for. */
static __attribute__((noinline, noipa)) void record_return_address(void)
{
	recorded_pc = (uintptr_t)__builtin_return_address(0);
}

/* Returns the line of its call; the call is not a tail call because the
 * return follows it. */
static __attribute__((noinline, noipa)) int call_site(void)
{
	record_return_address(); return __LINE__;
}

/* Inlined into inlined_caller: the recorded return address lies in
 * inlined code, which libdw knows as an inlined copy of this function. */
static inline __attribute__((always_inline)) int inlined_callee(void)
{
	record_return_address(); return __LINE__;
}

static int inlined_call_line;

static __attribute__((noinline, noipa)) int inlined_caller(void)
{
	inlined_call_line = __LINE__; return inlined_callee();
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

START_TEST(own_frame_has_file_and_line)
{
	struct mc_frame_info fi;
	mc_opt.symbolize = 1;
	int line = call_site();
	mc_symbolize(recorded_pc, &fi);
	ck_assert_str_eq(fi.function, "call_site");
	ck_assert_msg(ends_with(fi.file, "unit_symbolize.c"), "file \"%s\"", fi.file);
	ck_assert_int_eq(fi.line, line);
	ck_assert_msg(fi.object[0] != 0, "no object");
	mc_symbolize_end();
}
END_TEST

/* Inlined functions expand to frames of their own, as valgrind shows
 * them: the inlined function with its own line, then the function it was
 * inlined into with the line of the inlined call. */
START_TEST(inlined_frames)
{
	struct mc_frame_info fi[MC_MAX_INLINE];
	mc_opt.symbolize = 1;
	int line = inlined_caller();
	int n = mc_symbolize_frames(recorded_pc, fi, MC_MAX_INLINE);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(fi[0].function, "inlined_callee");
	ck_assert_int_eq(fi[0].line, line);
	ck_assert_str_eq(fi[1].function, "inlined_caller");
	ck_assert_int_eq(fi[1].line, inlined_call_line);
	ck_assert_msg(ends_with(fi[1].file, "unit_symbolize.c"), "file \"%s\"", fi[1].file);
	/* max 1: one frame, as mc_symbolize gives */
	ck_assert_int_eq(mc_symbolize_frames(recorded_pc, fi, 1), 1);
	mc_symbolize_end();
}
END_TEST

/* A frame asked for again in the same session comes from the cache:
 * the same frames, field for field, as the first time and as a fresh
 * session gives; each max has its own (max 1 expands nothing). */
static void same_frames(const struct mc_frame_info *a, const struct mc_frame_info *b, int n)
{
	for (int i = 0; i < n; i++) {
		ck_assert_str_eq(a[i].function, b[i].function);
		ck_assert_str_eq(a[i].linkage, b[i].linkage);
		ck_assert_str_eq(a[i].file, b[i].file);
		ck_assert_str_eq(a[i].object, b[i].object);
		ck_assert_int_eq(a[i].line, b[i].line);
	}
}

START_TEST(repeated_frames)
{
	mc_opt.symbolize = 1;
	inlined_caller();
	const uintptr_t pcs[] = { recorded_pc, (uintptr_t)&getpid + 1, (uintptr_t)&strlen + 3,
				  recorded_pc };
	for (size_t i = 0; i < MC_ARRAY_SIZE(pcs); i++) {
		struct mc_frame_info a[MC_MAX_INLINE], b[MC_MAX_INLINE], c[MC_MAX_INLINE], one;
		int n = mc_symbolize_frames(pcs[i], a, MC_MAX_INLINE);
		ck_assert_int_eq(mc_symbolize_frames(pcs[i], b, MC_MAX_INLINE), n);
		same_frames(a, b, n);
		ck_assert_int_eq(mc_symbolize_frames(pcs[i], &one, 1), 1);
		mc_symbolize_end();
		ck_assert_int_eq(mc_symbolize_frames(pcs[i], c, MC_MAX_INLINE), n);
		same_frames(a, c, n);
		mc_symbolize(pcs[i], &c[0]);
		same_frames(&one, &c[0], 1);
	}
	mc_symbolize_end();
}
END_TEST

/* The quick frame of inlined code: one frame, the symbol table's name
 * (the function the code was inlined into), no file:line, deep; its
 * debug information may name the inlined function, and no name holds
 * bytes that are in none of its strings.  The C library's frames are not
 * deep (MEMCHECK_SYMBOLIZE_SYSTEM=0): their quick frame is their frame. */
extern void _start(void); /* crt1.o's */
static volatile int qzx;  /* a name only .debug_info holds */

START_TEST(quick_frames)
{
	struct mc_frame_info q, full;
	bool deep;
	mc_opt.symbolize = 1;
	mc_opt.symbolize_system = 0;
	inlined_caller();
	mc_symbolize_quick(recorded_pc, &q, &deep);
	ck_assert(deep);
	ck_assert_str_eq(q.function, "inlined_caller");
	ck_assert_str_eq(q.linkage, "inlined_caller");
	ck_assert_str_eq(q.file, "");
	ck_assert(mc_symbolize_may_name(recorded_pc, "inlined_callee", 14));
	ck_assert(mc_symbolize_may_name(recorded_pc, "lined_cal", 9));
	ck_assert(!mc_symbolize_may_name(recorded_pc, "no function is called this", 26));
	/* _start (crt1.o, no debug information) lies in no unit, and every
	 * unit of this program has its address ranges in .debug_aranges:
	 * nothing the debug information holds names it, though the string
	 * unit holds the name asked, in its own bytes (gcc writes a name of
	 * three letters there, not in .debug_str: qzx below).  All of
	 * .debug_info was searched, as for an address whose unit may lack
	 * ranges: a large program's first run, 14% of its time. */
	qzx++;
	ck_assert(mc_symbolize_may_name(recorded_pc, "qzx", 3));
	ck_assert(!mc_symbolize_may_name((uintptr_t)&_start + 1, "qzx", 3));
	uintptr_t libc = (uintptr_t)&getpid + 1;
	mc_symbolize_quick(libc, &q, &deep);
	ck_assert(!deep);
	mc_symbolize(libc, &full);
	same_frames(&q, &full, 1);
	mc_symbolize_end();
}
END_TEST

/* The search of a module's debug strings answers through a filter of
 * their words before any search (symstr.c dstr_filter_may): it must
 * never turn away a string that lies in them.  This test's own file
 * (~190 KB of strings: filtered; its ASan build's ~320 KB, past the
 * filters' limit: searched) is read here; every piece of 7 to
 * 24 bytes of its .debug_str and .debug_line_str names is found, and
 * those pieces with a byte changed are found exactly where memmem finds
 * them in the three sections (a piece only .debug_info holds is the
 * unit's to answer: left out). */
static char *section_of(char *file, size_t size, const char *want, size_t *n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
	ck_assert(eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	const char *names = file + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, want) == 0) {
			ck_assert(sh[i].sh_offset + sh[i].sh_size <= size);
			*n = sh[i].sh_size;
			return file + sh[i].sh_offset;
		}
	*n = 0;
	return NULL;
}

START_TEST(debug_strings_filtered_exactly)
{
	mc_opt.symbolize = 1;
	inlined_caller();
	int fd = open("/proc/self/exe", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	size_t size = (size_t)lseek(fd, 0, SEEK_END);
	char *file = malloc(size);
	ck_assert(file && pread(fd, file, size, 0) == (ssize_t)size);
	close(fd);
	size_t n[3];
	const char *sec[3] = { section_of(file, size, ".debug_info", &n[0]),
			       section_of(file, size, ".debug_str", &n[1]),
			       section_of(file, size, ".debug_line_str", &n[2]) };
	ck_assert(sec[0] && sec[1]);
	int present = 0, absent = 0;
	for (int k = 1; k < 3; k++)
		for (size_t off = 0; sec[k] && off < n[k]; off += strlen(sec[k] + off) + 1) {
			const char *name = sec[k] + off;
			size_t len = strnlen(name, n[k] - off);
			for (size_t at = 0; at + 7 <= len; at += 3) {
				size_t piece = len - at < 24 ? len - at : 24;
				char s[24];
				memcpy(s, name + at, piece);
				ck_assert(mc_symbolize_may_name(recorded_pc, s, piece));
				present++;
				s[piece / 2] ^= 0x20;
				bool in_str = (sec[1] && memmem(sec[1], n[1], s, piece)) ||
					      (sec[2] && memmem(sec[2], n[2], s, piece));
				bool in_info = memmem(sec[0], n[0], s, piece) != NULL;
				if (in_str || !in_info) {
					ck_assert_int_eq(mc_symbolize_may_name(recorded_pc, s, piece),
							 in_str);
					absent += !in_str;
				}
			}
		}
	ck_assert_int_gt(present, 1000);
	ck_assert_int_gt(absent, 100);
	free(file);
	mc_symbolize_end();
}
END_TEST

START_TEST(session_survives_end)
{
	struct mc_frame_info a, b;
	mc_opt.symbolize = 1;
	int line = call_site();
	mc_symbolize(recorded_pc, &a);
	mc_symbolize_end();
	mc_symbolize_end();
	mc_symbolize(recorded_pc, &b);
	ck_assert_str_eq(a.function, b.function);
	ck_assert_str_eq(a.file, b.file);
	ck_assert_int_eq(b.line, line);
	mc_symbolize_end();
}
END_TEST

START_TEST(libc_function)
{
	struct mc_frame_info fi;
	mc_opt.symbolize = 1;
	mc_symbolize((uintptr_t)&getpid + 1, &fi);
	ck_assert_msg(strstr(fi.object, "libc.so"), "object \"%s\"", fi.object);
	ck_assert_str_ne(fi.function, "???");
	mc_symbolize_end();
}
END_TEST

START_TEST(garbage_pcs)
{
	static const uintptr_t pcs[] = { 0, 1, 2, 4096, (uintptr_t)-1,
					 (uintptr_t)1 << 46 };
	struct mc_frame_info fi;
	for (int on = 0; on <= 1; on++) {
		mc_opt.symbolize = on;
		for (size_t i = 0; i < MC_ARRAY_SIZE(pcs); i++) {
			memset(&fi, 'x', sizeof fi);
			mc_symbolize(pcs[i], &fi);
			ck_assert_str_eq(fi.function, "???");
			ck_assert_str_eq(fi.file, "");
			ck_assert_int_eq(fi.line, 0);
			ck_assert_msg(memchr(fi.object, 0, sizeof fi.object),
				      "object not terminated");
		}
	}
	mc_symbolize_end();
}
END_TEST

START_TEST(fallback_without_symbolize)
{
	struct mc_frame_info fi;
	mc_opt.symbolize = 0;
	call_site();
	mc_symbolize(recorded_pc, &fi);
	ck_assert_str_eq(fi.file, "");
	ck_assert_int_eq(fi.line, 0);
	ck_assert_msg(fi.function[0] != 0, "empty function");
	/* Exported libc functions are still named by dladdr. */
	mc_symbolize((uintptr_t)&getpid + 1, &fi);
	ck_assert_msg(strstr(fi.object, "libc.so"), "object \"%s\"", fi.object);
	ck_assert_str_ne(fi.function, "???");
	ck_assert_str_eq(fi.file, "");
}
END_TEST

/* A library loaded after the session began: named by dladdr while the
 * session is stale, by libdw once mc_symbolize_end made it re-read. */
START_TEST(library_loaded_later)
{
	struct mc_frame_info fi;
	mc_opt.symbolize = 1;
	call_site();
	mc_symbolize(recorded_pc, &fi);
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;         /* not installed: nothing to test */
	void *fn = dlsym(h, "unw_backtrace");
	ck_assert_ptr_nonnull(fn);
	mc_symbolize((uintptr_t)fn + 1, &fi);
	ck_assert_msg(strstr(fi.object, "libunwind"), "stale: object \"%s\"", fi.object);
	mc_symbolize_end();
	mc_symbolize((uintptr_t)fn + 1, &fi);
	ck_assert_msg(strstr(fi.object, "libunwind"), "fresh: object \"%s\"", fi.object);
	ck_assert_str_ne(fi.function, "???");
	mc_symbolize_end();
	dlclose(h);
}
END_TEST

/* What dwfl_module_addrname says at addr, as memcheck writes names:
 * without a symbol version, a GCC local alias as its function. */
static void libdw_name(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s", name);
	char *at = strchr(out, '@');
	if (at && at != out)
		*at = 0;
	size_t len = strlen(out);
	if (len > 11 && strcmp(out + len - 11, ".localalias") == 0)
		out[len - 11] = 0;
}

/* The symbols of one module, by address, for valgrind_named. */
struct alias_syms {
	Dwfl_Module *mod;
	size_t n;
	struct alias_sym {
		GElf_Addr value;
		GElf_Xword size;
		const char *name;
	} *v;
};

static int alias_sym_cmp(const void *a, const void *b)
{
	const struct alias_sym *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* valgrind's name of the function libdw names name at a in mod (libdw's
 * symbol sym at value, from dwfl_module_addrinfo): of the symbols at
 * its address with its size, locals and globals alike (valgrind merges
 * them: a thread_local's __tls_init beside its global _ZTH..., session
 * 46), the one valgrind's prefersym keeps (symtab.h's
 * mc_valgrind_prefers); name itself where the symbol has no size.  The
 * module's symbols read once (getsym_info), kept for its next calls. */
static bool valgrind_kind(const GElf_Sym *y)
{
	unsigned type = GELF_ST_TYPE(y->st_info);
	return y->st_size && (type == STT_FUNC || type == STT_OBJECT || type == STT_GNU_IFUNC);
}

static const char *valgrind_named(struct alias_syms *t, Dwfl_Module *mod,
				  int (*getsymtab)(Dwfl_Module *),
				  const char *(*getsym_info)(Dwfl_Module *, int, GElf_Sym *,
							     GElf_Addr *, GElf_Word *, Elf **,
							     Dwarf_Addr *),
				  const char *name, const GElf_Sym *sym, GElf_Addr value, GElf_Addr a)
{
	if (!name)
		return name;
	if (t->mod != mod) {
		free(t->v);
		int n = getsymtab(mod);
		t->v = calloc(n > 0 ? (size_t)n : 1, sizeof *t->v);
		ck_assert_ptr_nonnull(t->v);
		t->n = 0;
		t->mod = mod;
		for (int i = 1; i < n; i++) {
			GElf_Sym y;
			GElf_Addr v;
			const char *nm = getsym_info(mod, i, &y, &v, NULL, NULL, NULL);
			if (nm && *nm && valgrind_kind(&y))
				t->v[t->n++] = (struct alias_sym){ v, y.st_size, nm };
		}
		qsort(t->v, t->n, sizeof *t->v, alias_sym_cmp);
	}
	if (!valgrind_kind(sym)) {
		/* libdw's answer is a symbol valgrind never names code by
		 * (no size, or no type: the dynamic loader's
		 * _dl_start_user): valgrind's is one of those it takes
		 * that covers a, the nearest below (the smallest of those),
		 * or none. */
		const struct alias_sym *c = NULL;
		for (size_t i = 0; i < t->n && t->v[i].value <= a; i++)
			if (a - t->v[i].value < t->v[i].size &&
			    (!c || t->v[i].value > c->value ||
			     (t->v[i].value == c->value && t->v[i].size < c->size)))
				c = &t->v[i];
		if (!c)
			return NULL;
		name = c->name;
		value = c->value;
		GElf_Sym covering = { .st_size = c->size };
		sym = &covering;
		for (size_t i = 0; i < t->n && t->v[i].value <= value; i++)
			if (t->v[i].value == value && t->v[i].size == sym->st_size &&
			    mc_valgrind_prefers(t->v[i].name, name))
				name = t->v[i].name;
		return name;
	}
	const char *best = name;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n && t->v[i].value == value; i++)
		if (t->v[i].size == sym->st_size && mc_valgrind_prefers(t->v[i].name, best))
			best = t->v[i].name;
	return best;
}

/* Around a sample of the C library's symbols (starts, ends, middles, the
 * bytes either side), memcheck names the address as libdw's own search
 * of the symbol table does, through a session of the test's own. */
START_TEST(names_as_libdw_chooses)
{
	unsetenv("DEBUGINFOD_URLS");
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;         /* no libdw: memcheck names by dladdr alone */
#define SYM(name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(h, #name); \
	ck_assert_ptr_nonnull(p_##name)
	SYM(dwfl_begin);
	SYM(dwfl_end);
	SYM(dwfl_linux_proc_report);
	SYM(dwfl_report_end);
	SYM(dwfl_addrmodule);
	SYM(dwfl_module_info);
	SYM(dwfl_module_getsymtab);
	SYM(dwfl_module_getsym_info);
	SYM(dwfl_module_addrname);
	SYM(dwfl_module_addrinfo);
	SYM(dwfl_linux_proc_find_elf);
	SYM(dwfl_standard_find_debuginfo);
#undef SYM
	static char *debuginfo_path;
	static Dwfl_Callbacks cb;
	cb.find_elf = p_dwfl_linux_proc_find_elf;
	cb.find_debuginfo = p_dwfl_standard_find_debuginfo;
	cb.debuginfo_path = &debuginfo_path;
	Dwfl *d = p_dwfl_begin(&cb);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(p_dwfl_linux_proc_report(d, getpid()), 0);
	ck_assert_int_eq(p_dwfl_report_end(d, NULL, NULL), 0);
	Dwfl_Module *mod = p_dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&getpid);
	ck_assert_ptr_nonnull(mod);
	Dwarf_Addr lo, hi;
	p_dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	int n = p_dwfl_module_getsymtab(mod);
	ck_assert_int_gt(n, 1);
	mc_opt.symbolize = 1;
	mc_opt.symbolize_system = 0;
	int compared = 0;
	struct alias_syms syms = { 0 };
	for (int i = 1; i < n; i += n / 2000 + 1) {
		GElf_Sym sym;
		GElf_Addr v;
		if (!p_dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL))
			continue;
		const GElf_Addr probe[] = { v - 1, v, v + 1, v + sym.st_size / 2,
					    v + sym.st_size - 1, v + sym.st_size,
					    v + sym.st_size + 1 };
		for (size_t k = 0; k < MC_ARRAY_SIZE(probe); k++) {
			GElf_Addr a = probe[k];
			GElf_Sym sy;
			GElf_Off off;
			const char *name = a >= lo && a < hi ?
				p_dwfl_module_addrinfo(mod, a, &off, &sy, NULL, NULL, NULL) : NULL;
			if (!name || !*name)
				continue;  /* memcheck asks dladdr then */
			ck_assert_str_eq(name, p_dwfl_module_addrname(mod, a));
			name = valgrind_named(&syms, mod, p_dwfl_module_getsymtab,
					      p_dwfl_module_getsym_info, name, &sy, a - off, a);
			if (!name)
				continue;  /* memcheck asks dladdr then */
			char want[sizeof ((struct mc_frame_info *)0)->function];
			libdw_name(name, want, sizeof want);
			struct mc_frame_info fi;
			mc_symbolize((uintptr_t)a + 1, &fi);  /* a return address: a + 1 */
			ck_assert_msg(strcmp(fi.function, want) == 0,
				      "libc+0x%lx: memcheck names it %s, valgrind %s",
				      (unsigned long)(a - lo), fi.function, want);
			compared++;
		}
	}
	ck_assert_int_gt(compared, 2000);
	free(syms.v);
	p_dwfl_end(d);
	mc_symbolize_end();
}
END_TEST

/* libdw's session of the test's own process, for the comparisons. */
static struct {
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_info) *info;
	__typeof__(dwfl_module_getsymtab) *getsymtab;
	__typeof__(dwfl_module_getsym_info) *getsym_info;
	__typeof__(dwfl_module_addrname) *addrname;
	__typeof__(dwfl_module_addrinfo) *addrinfo;
	__typeof__(dwfl_module_getdwarf) *getdwarf;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_module_addrdie) *addrdie;
	__typeof__(dwarf_getscopes) *getscopes;
	__typeof__(dwarf_getscopes_die) *getscopes_die;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_attr_integrate) *attr_integrate;
	__typeof__(dwarf_formstring) *formstring;
	Dwfl *d;
} lw;

/* memcheck's name own where valgrind's is want (both NULL: none). */
static bool as_libdw(const char *own, const char *want)
{
	return own && want ? strcmp(own, want) == 0 : own == want;
}

/* The name valgrind gives the function at a, in lw's session: libdw's
 * symbol there, or of its aliases the one valgrind keeps (a C library
 * function's public name for its __ one, a constructor's C1 for C2);
 * NULL where libdw names none.  The aliases are read from the module's
 * symbol table once (syms), forgotten with the session (lw_forget). */
static struct alias_syms lw_syms;

static const char *lw_valgrind_name(Dwfl_Module *mod, GElf_Addr a)
{
	GElf_Sym sy;
	GElf_Off off;
	const char *name = lw.addrinfo(mod, a, &off, &sy, NULL, NULL, NULL);
	ck_assert_msg(!name == !lw.addrname(mod, a), "%#lx: addrinfo and addrname disagree",
		      (unsigned long)a);
	return valgrind_named(&lw_syms, mod, lw.getsymtab, lw.getsym_info, name, &sy, a - off, a);
}

static void lw_forget(void)
{
	free(lw_syms.v);
	lw_syms = (struct alias_syms){ 0 };
}

static bool libdw_session(void)
{
	unsetenv("DEBUGINFOD_URLS");
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	__typeof__(dwfl_begin) *begin = (__typeof__(begin))dlsym(h, "dwfl_begin");
	__typeof__(dwfl_linux_proc_report) *report = (__typeof__(report))dlsym(h, "dwfl_linux_proc_report");
	__typeof__(dwfl_report_end) *report_end = (__typeof__(report_end))dlsym(h, "dwfl_report_end");
	static char *debuginfo_path;
	static Dwfl_Callbacks cb;
	cb.find_elf = (__typeof__(cb.find_elf))dlsym(h, "dwfl_linux_proc_find_elf");
	cb.find_debuginfo = (__typeof__(cb.find_debuginfo))dlsym(h, "dwfl_standard_find_debuginfo");
	cb.debuginfo_path = &debuginfo_path;
	const struct mc_dl_sym syms[] = {
		MC_DL_SYM(lw.addrmodule, "dwfl_addrmodule"), MC_DL_SYM(lw.info, "dwfl_module_info"),
		MC_DL_SYM(lw.getsymtab, "dwfl_module_getsymtab"),
		MC_DL_SYM(lw.getsym_info, "dwfl_module_getsym_info"),
		MC_DL_SYM(lw.addrname, "dwfl_module_addrname"),
		MC_DL_SYM(lw.addrinfo, "dwfl_module_addrinfo"),
		MC_DL_SYM(lw.getdwarf, "dwfl_module_getdwarf"), MC_DL_SYM(lw.end, "dwfl_end"),
		MC_DL_SYM(lw.addrdie, "dwfl_module_addrdie"),
		MC_DL_SYM(lw.getscopes, "dwarf_getscopes"),
		MC_DL_SYM(lw.getscopes_die, "dwarf_getscopes_die"), MC_DL_SYM(lw.tag, "dwarf_tag"),
		MC_DL_SYM(lw.attr_integrate, "dwarf_attr_integrate"),
		MC_DL_SYM(lw.formstring, "dwarf_formstring"),
	};
	ck_assert(mc_dl_bind_group(h, syms, MC_ARRAY_SIZE(syms)));
	ck_assert_ptr_nonnull(begin);
	lw.d = begin(&cb);
	ck_assert_ptr_nonnull(lw.d);
	ck_assert_int_eq(report(lw.d, getpid()), 0);
	ck_assert_int_eq(report_end(lw.d, NULL, NULL), 0);
	return true;
}

struct object_seen {
	uintptr_t lo;
	char path[256];
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object_seen *v = arg;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			int k = 0;
			while (k < 64 && v[k].lo)
				k++;
			if (k < 64)
				v[k].lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 0;
}

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* memcheck's session reports a module to libdwfl only when a frame
 * needs it (symsession.c's session_module), from its own read of the
 * maps, where dwfl_linux_proc_report reported them all: at the start of
 * each object's code (the test, the C library and the others, read
 * through libdw here: MEMCHECK_SYMBOLIZE_SYSTEM=1) and in the vDSO,
 * memcheck's frame is the one libdw gives in a session of its own made
 * the old way: function, file, line and object. */
START_TEST(modules_reported_as_proc_report)
{
	if (!libdw_session())
		return;         /* no libdw: nothing to compare with */
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	ck_assert_ptr_nonnull(h);
	__typeof__(dwfl_module_getsrc) *getsrc = (__typeof__(getsrc))dlsym(h, "dwfl_module_getsrc");
	__typeof__(dwfl_lineinfo) *lineinfo = (__typeof__(lineinfo))dlsym(h, "dwfl_lineinfo");
	ck_assert(getsrc && lineinfo);
	static struct object_seen objs[64];
	memset(objs, 0, sizeof objs);
	dl_iterate_phdr(each_object, objs);
	int k = 0;
	while (k < 63 && objs[k].lo)
		k++;
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	mc_opt.symbolize = 1;
	mc_opt.symbolize_system = 1;
	mc_symbolize_end();
	int compared = 0, with_line = 0, in_vdso = 0;
	for (int o = 0; o < 64 && (objs[o].lo || (o == k && vdso)); o++) {
		Dwfl_Module *mod = lw.addrmodule(lw.d, objs[o].lo ? objs[o].lo : vdso);
		if (!mod)
			continue;
		/* the middle of the module's first function with a size */
		uintptr_t a = 0;
		for (int i = 1, n = lw.getsymtab(mod); i < n && !a; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			if (lw.getsym_info(mod, i, &sym, &value, NULL, NULL, NULL) &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 1 &&
			    lw.addrmodule(lw.d, value) == mod)
				a = (uintptr_t)value + sym.st_size / 2;
		}
		if (!a)
			continue;
		const char *mainfile = NULL, *fn = lw_valgrind_name(mod, a);
		const char *name = lw.info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		char want[256];
		libdw_name(fn ? fn : "", want, sizeof want);
		struct mc_frame_info f;
		ck_assert_int_eq(mc_symbolize_frames(a + 1, &f, 1), 1);
		if (fn && *fn)
			ck_assert_msg(as_libdw(f.function, want), "%#lx in %s: memcheck %s, valgrind %s",
				      (unsigned long)a, name, f.function, want);
		if (name && (name[0] == '/' || mainfile))
			ck_assert_str_eq(f.object, mainfile ? mainfile : name);
		Dwfl_Line *l = getsrc(mod, a);
		int line = 0;
		const char *file = l ? lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
		if (file && *file) {
			ck_assert_str_eq(f.file, file);
			ck_assert_int_eq(f.line, line);
			with_line++;
		}
		in_vdso += !objs[o].lo;
		compared++;
	}
	ck_assert_int_ge(compared, 3);
	ck_assert_int_ge(with_line, 1);    /* the test itself, built with -g */
	ck_assert_int_eq(in_vdso, vdso != 0);
	mc_opt.symbolize_system = 0;
	mc_symbolize_end();
	lw_forget();
	lw.end(lw.d);
}
END_TEST

/* Every object of the process that elfmod.c reads (the C library, whose
 * symbols come from its build-ID debug file; the test itself, its own
 * table; libdw and its dependencies, stripped, by their dynamic symbols),
 * around a sample of each one's symbols: libdw's very name wherever
 * elfmod.c gives one, libdw's file as the object, and no debug
 * information where libdw finds none. */
START_TEST(own_reading_as_libdw)
{
	if (!libdw_session())
		return;         /* no libdw: nothing to compare with */
	static struct object_seen objs[64];
	memset(objs, 0, sizeof objs);
	dl_iterate_phdr(each_object, objs);
	int taken = 0, compared = 0, asked = 0, batched = 0, few_compared = 0, unbuilt = 0;
	size_t sizeless = 0;
	int sizeless_named = 0;
	for (int o = 0; o < 64 && objs[o].lo; o++) {
		Dwfl_Module *mod = lw.addrmodule(lw.d, objs[o].lo);
		int fresh;
		struct mc_elfmod *m = mc_elfmod_find(objs[o].lo, &fresh);
		if (!mod || !m)
			continue;
		taken++;
		const char *mainfile = NULL;
		Dwarf_Addr lo, hi;
		const char *name = lw.info(mod, NULL, &lo, &hi, NULL, NULL, &mainfile, NULL);
		int n = lw.getsymtab(mod);   /* opens the file: mainfile set */
		lw.info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		ck_assert_str_eq(mc_elfmod_path(m), mainfile ? mainfile : name);
		Dwarf_Addr bias;
		bool dwarf = lw.getdwarf(mod, &bias) != NULL;
		if (mc_elfmod_debuginfo(m) == MC_DI_NONE)
			ck_assert_msg(!dwarf, "%s: libdw finds DWARF, memcheck none", mainfile);
		else
			ck_assert_msg(dwarf || mc_elfmod_debuginfo(m) == MC_DI_ELSEWHERE,
				      "%s: memcheck reads DWARF of its own, libdw none", mainfile);
		/* The probes: each answered first in batches, before the
		 * table is built (one read of it), then alone (the sorted
		 * table's search). */
		static uint64_t addr[8192];
		static const char *batch_name[8192];
		static bool done[8192];
		size_t na = 0;
		for (int i = 1; i < n; i += n / 500 + 1) {
			GElf_Sym sym;
			GElf_Addr v;
			Dwarf_Addr b;
			if (!lw.getsym_info(mod, i, &sym, &v, NULL, NULL, &b))
				continue;
			ck_assert_msg(b == mc_elfmod_bias(m), "%s: bias %#lx, libdw %#lx", mainfile,
				      (unsigned long)mc_elfmod_bias(m), (unsigned long)b);
			const GElf_Addr probe[] = { v - 1, v, v + 1, v + sym.st_size / 2,
						    v + sym.st_size - 1, v + sym.st_size,
						    v + sym.st_size + 1 };
			for (size_t k = 0; k < MC_ARRAY_SIZE(probe); k++) {
				int f2;
				if (probe[k] >= lo && probe[k] < hi && na < 8192 &&
				    mc_elfmod_find(probe[k], &f2) == m)
					addr[na++] = probe[k];
			}
		}
		/* Just past every symbol of no size (the dynamic loader's
		 * _dl_start_user, under every process's constructors): libdw
		 * takes one only in the address's section, which symtab.c
		 * finds in the headers of the symbols' file. */
		size_t from_sizeless = na;
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr v;
			int f2;
			if (lw.getsym_info(mod, i, &sym, &v, NULL, NULL, NULL) && !sym.st_size &&
			    sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE &&
			    v + 1 >= lo && v + 1 < hi && na < 8192 && mc_elfmod_find(v + 1, &f2) == m)
				addr[na++] = v + 1;
		}
		sizeless += na - from_sizeless;
		qsort(addr, na, sizeof *addr, addr_cmp);
		mc_elfmod_names(m, addr, na, batch_name, done);
		for (size_t k = 0; k < na; k++) {
			bool ask;
			const char *own = mc_elfmod_name(m, addr[k], &ask);
			const char *want = lw_valgrind_name(mod, addr[k]);
			/* the first few alone, a read of the table each (a
			 * report's few names), the table not built */
			unbuilt += !ask && !mc_elfmod_symtab(m)->built;
			for (int pass = 0; pass < 2; pass++, own = batch_name[k], ask = !done[k]) {
				if (ask) {
					asked += !pass;
					continue;
				}
				batched += pass;
				ck_assert_msg(as_libdw(own, want),
					      "%s+0x%lx: memcheck reads %s (%s), valgrind %s", mainfile,
					      (unsigned long)(addr[k] - lo), own ? own : "(none)",
					      pass ? "in a batch" : "alone", want ? want : "(none)");
				compared++;
			}
		}
		/* A few addresses among many symbols, as at a short process's
		 * exit: most symbols are passed over by the quick test of
		 * their page (symtab.c's scan_quick), which must change no
		 * answer. */
		for (size_t stride = 29; stride < 200 && na; stride *= 3) {
			static uint64_t few[8192];
			size_t nf = 0;
			for (size_t k = o % stride; k < na; k += stride)
				few[nf++] = addr[k];
			mc_elfmod_names(m, few, nf, batch_name, done);
			for (size_t k = 0; k < nf; k++) {
				const char *want = lw_valgrind_name(mod, few[k]);
				if (!done[k])
					continue;
				ck_assert_msg(as_libdw(batch_name[k], want),
					      "%s+0x%lx: memcheck reads %s (a batch of %zu), valgrind %s",
					      mainfile, (unsigned long)(few[k] - lo),
					      batch_name[k] ? batch_name[k] : "(none)", nf,
					      want ? want : "(none)");
				few_compared++;
			}
		}
		/* The table built: each just past a symbol of no size named
		 * as valgrind names it: by a symbol with a size that covers
		 * it, or not at all (never by the size-0 one, as libdw). */
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr v;
			int f2;
			bool ask;
			const char *label = lw.getsym_info(mod, i, &sym, &v, NULL, NULL, NULL);
			if (!label || sym.st_size || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx >= SHN_LORESERVE || v + 1 < lo || v + 1 >= hi || mc_elfmod_find(v + 1, &f2) != m)
				continue;
			const char *own = mc_elfmod_name(m, v + 1, &ask);
			const char *want = lw_valgrind_name(mod, v + 1);
			if (ask)
				continue;
			ck_assert_msg((!own && !want) || (own && want && strcmp(own, want) == 0),
				      "%s+0x%lx: memcheck reads %s past a symbol of no size, valgrind %s",
				      mainfile, (unsigned long)(v + 1 - lo), own ? own : "(none)",
				      want ? want : "(none)");
			/* libdw names it by that symbol, valgrind never does
			 * (session 46: memcheck took libdw's name before) */
			const char *dw = lw.addrname(mod, v + 1);
			sizeless_named += dw && strcmp(dw, label) == 0 && !(own && strcmp(own, label) == 0);
		}
	}
	ck_assert_int_ge(taken, 3);
	ck_assert_int_gt(few_compared, 100);
	ck_assert_int_gt(compared, 4000);
	ck_assert_int_ge(unbuilt, taken);
	ck_assert_int_lt(asked, compared / 20);
	ck_assert_uint_gt(sizeless, 0);
	/* the dynamic loader's _dl_start_user, at least: libdw's name, not
	 * valgrind's or memcheck's */
	ck_assert_int_gt(sizeless_named, 0);
	/* Probes between symbols are left to the search where a symbol of
	 * no size could be the answer; those inside one are answered. */
	ck_assert_int_gt(batched, compared / 3);
	lw_forget();
	lw.end(lw.d);
	mc_elfmod_forget(true);
}
END_TEST

/* Symbol i a batch skips whatever its value: no name, undefined, a
 * section's, a file's or TLS (its name in the table, no extended index). */
static bool skipped_whatever(const struct mc_symtab *t, int i)
{
	const Elf64_Sym *y = &t->raw.sym[i];
	unsigned type = ELF64_ST_TYPE(y->st_info);
	return y->st_name < t->raw.strsize && y->st_shndx != SHN_XINDEX &&
	       (!y->st_name || y->st_shndx == SHN_UNDEF || type == STT_SECTION ||
		type == STT_FILE || type == STT_TLS);
}

/* A batch's read of the C library's table passes over most symbols
 * quickly (symtab.c's scan_quick, and scan_quick_avx2 eight at a time
 * where the CPU has AVX2): for many random sets of addresses, at
 * symbols, near their ends, at page edges and anywhere, every symbol
 * the full test looks at is looked at by each quick way, and no other. */
START_TEST(quick_scan_as_full_test)
{
	mc_elfmod_forget(true);
	int fresh;
	struct mc_elfmod *m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	if (!m)
		return;   /* the C library left to libdw here: nothing read */
	const struct mc_symtab *t = mc_elfmod_symtab(m);
	ck_assert(t->raw_ok);
	ck_assert_int_gt(t->nsyms, 1000);
	const Elf64_Sym *sym = t->raw.sym;
	uint64_t top = 0;
	for (int i = 1; i < t->nsyms; i++)
		if (sym[i].st_value > top && sym[i].st_value < ((uint64_t)1 << 32))
			top = sym[i].st_value;
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t sets = 0, looked = 0, few_looked = 0, few_sets = 0;
	static GElf_Addr a[256];
	int *stop[3];
	for (int how = 0; how < 3; how++)
		stop[how] = malloc((size_t)t->nsyms * sizeof *stop[how]);
	for (int set = 0; set < 400; set++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t n = set % 4 == 0 ? 1 + x % 8 : 1 + x % 256;
		for (size_t j = 0; j < n; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const Elf64_Sym *y = &sym[1 + (x >> 8) % (uint64_t)(t->nsyms - 1)];
			uint64_t v;
			switch (x % 4) {
			case 0: v = y->st_value + (x >> 40) % (y->st_size + 1); break;
			case 1: v = y->st_value + y->st_size - 1 + (x >> 40) % 3; break;
			case 2: v = (y->st_value & ~(uint64_t)4095) + 4095 + (x >> 40) % 2; break;
			default: v = (x >> 20) % (top + 8192); break;
			}
			a[j] = v + t->raw.bias;
		}
		qsort(a, n, sizeof *a, addr_cmp);
		/* each way's stops: the scalar quick pass's and the best's
		 * alike, and the full test's alike but for symbols a batch skips
		 * whatever they cover (no name, a section's, ...), which one way
		 * may pass over without a look where another looks */
		size_t ns[3] = { 0 };
		for (int how = 0; how < 3; how++)
			for (int i = 1; (i = mc_symtab_scan_next(t, a, n, i, t->nsyms, how)) < t->nsyms;
			     i++)
				stop[how][ns[how]++] = i;
		ck_assert_msg(ns[MC_SCAN_BEST] == ns[MC_SCAN_SCALAR],
			      "set %d of %zu addresses: %zu symbols looked at by the scalar quick "
			      "pass, %zu by the best", set, n, ns[MC_SCAN_SCALAR], ns[MC_SCAN_BEST]);
		for (size_t k = 0; k < ns[MC_SCAN_SCALAR]; k++)
			ck_assert_msg(stop[MC_SCAN_BEST][k] == stop[MC_SCAN_SCALAR][k],
				      "set %d of %zu addresses: look %zu at symbol %d by the scalar "
				      "quick pass, %d by the best", set, n, k, stop[MC_SCAN_SCALAR][k],
				      stop[MC_SCAN_BEST][k]);
		size_t f = 0, q = 0;
		for (;; f++, q++) {
			while (f < ns[MC_SCAN_FULL] && skipped_whatever(t, stop[MC_SCAN_FULL][f]))
				f++;
			while (q < ns[MC_SCAN_SCALAR] && skipped_whatever(t, stop[MC_SCAN_SCALAR][q]))
				q++;
			if (f == ns[MC_SCAN_FULL] || q == ns[MC_SCAN_SCALAR])
				break;
			ck_assert_msg(stop[MC_SCAN_FULL][f] == stop[MC_SCAN_SCALAR][q],
				      "set %d of %zu addresses: symbol %d looked at in full, %d by the "
				      "scalar quick pass", set, n, stop[MC_SCAN_FULL][f],
				      stop[MC_SCAN_SCALAR][q]);
		}
		ck_assert_msg(f == ns[MC_SCAN_FULL] && q == ns[MC_SCAN_SCALAR],
			      "set %d of %zu addresses: symbol %d looked at in full only, %d by the "
			      "scalar quick pass only", set, n,
			      f < ns[MC_SCAN_FULL] ? stop[MC_SCAN_FULL][f] : -1,
			      q < ns[MC_SCAN_SCALAR] ? stop[MC_SCAN_SCALAR][q] : -1);
		size_t stops = ns[MC_SCAN_BEST];
		sets++;
		looked += stops;
		if (n <= 8) {
			few_sets++;
			few_looked += stops;
		}
	}
	ck_assert_int_eq(sets, 400);
	/* the sets meet symbols: each looks at some, a few addresses few */
	ck_assert_int_gt(looked, sets);
	ck_assert_int_lt(few_looked, few_sets * (size_t)t->nsyms / 10);
	for (int how = 0; how < 3; how++)
		free(stop[how]);
	mc_elfmod_forget(true);
}
END_TEST

/* The frames of an address in inlined code and out of it, as memcheck
 * reads them from its table of a unit's top-level functions
 * (symscopes.c's scopes_at), against libdw's own dwarf_getscopes and
 * dwarf_getscopes_die, which memcheck asked before: over the code of
 * this program (built -O1 -g, lib/'s objects in it, with inlined calls),
 * the same number of frames with the same names. */
/* Is the page at p present in this process's page table
 * (/proc/self/pagemap's bit 63), not only in the page cache? */
static bool page_present(const void *p)
{
	static int fd = -1;
	if (fd < 0)
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e = 0;
	off_t at = (off_t)((uintptr_t)p / 4096 * sizeof e);
	ck_assert_int_eq(pread(fd, &e, sizeof e, at), (ssize_t)sizeof e);
	return e >> 63 & 1;
}

/* The table elfmod.c reads names from is mapped in whole when its files
 * are read, before the first name: its first read goes over every
 * entry, and each 64 KiB of it was otherwise a page fault (the C
 * library's debug table: 7 of them). */
START_TEST(table_mapped_at_once)
{
	mc_elfmod_forget(true);   /* the files mapped afresh */
	int fresh;
	struct mc_elfmod *m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	if (!m)
		return;   /* the C library left to libdw here: nothing read */
	const struct mc_symtab *t = mc_elfmod_symtab(m);
	ck_assert_int_gt(t->nsyms, 1);
	const char *lo = (const char *)t->raw.sym, *hi = lo + (size_t)t->nsyms * sizeof *t->raw.sym;
	size_t absent = 0, pages = 0;
	for (const char *p = (const char *)((uintptr_t)lo & ~(uintptr_t)4095); p < hi; p += 4096) {
		pages++;
		absent += !page_present(p);
	}
	ck_assert_msg(!absent, "%zu of the table's %zu pages not mapped", absent, pages);
	mc_elfmod_forget(true);
}
END_TEST

/* An object's file is named by the table the scan lent (its read of
 * /proc/self/maps), not by a read of elfmod.c's own: a path spelled
 * otherwise in the lent table is the one given. */
START_TEST(paths_from_the_lent_maps_read)
{
	Dl_info libc;
	ck_assert(dladdr((void *)&getpid, &libc));
	char spelled[300];
	const char *slash = strrchr(libc.dli_fname, '/');
	ck_assert_ptr_nonnull(slash);
	snprintf(spelled, sizeof spelled, "%.*s/.%s", (int)(slash - libc.dli_fname),
		 libc.dli_fname, slash);
	struct mc_buf runs = { 0 };
	struct mc_maps_runs w = { .b = &runs };
	struct mc_mapping first = { .lo = (uintptr_t)libc.dli_fbase,
				    .hi = (uintptr_t)libc.dli_fbase + 4096, .name = spelled };
	mc_maps_runs_note(&w, &first);
	ck_assert(!runs.oom);
	mc_elfmod_forget(true);
	mc_elfmod_runs_lend(&runs);
	int fresh;
	struct mc_elfmod *m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	if (m)
		ck_assert_str_eq(mc_elfmod_path(m), spelled);
	mc_elfmod_forget(true);
	mc_elfmod_runs_lend(NULL);
	m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	if (m)
		ck_assert_str_ne(mc_elfmod_path(m), spelled);
	mc_elfmod_forget(true);
	mc_buf_free(&runs);
}
END_TEST

struct count_named {
	const char *name;
	int n;
};

static bool count_named_cb(const struct mc_mapping *mp, void *arg)
{
	struct count_named *c = arg;
	c->n += strcmp(mp->name, c->name) == 0;
	return true;
}

static int mappings_of(const char *path)
{
	struct count_named c = { path, 0 };
	ck_assert(mc_maps_each(count_named_cb, &c));
	return c.n;
}

/* The process's last report leaves the objects' files mapped (an munmap
 * of one cost 80-400 us here, and the exit drops them); any other
 * report's end unmaps them. */
START_TEST(files_left_mapped_at_exit)
{
	mc_symbolize_end();
	int fresh;
	struct mc_elfmod *m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	if (!m)
		return;   /* the C library left to libdw here: nothing mapped */
	char path[256];
	snprintf(path, sizeof path, "%s", mc_elfmod_path(m));
	int mapped = mappings_of(path);
	mc_symbolize_end();
	ck_assert_int_eq(mappings_of(path), mapped - 1);
	ck_assert_ptr_nonnull(mc_elfmod_find((uintptr_t)&getpid, &fresh));
	ck_assert_int_eq(mappings_of(path), mapped);
	mc_symbolize_end_at_exit();
	ck_assert_int_eq(mappings_of(path), mapped);
	/* forgotten all the same: a later session maps the file afresh */
	ck_assert_ptr_nonnull(mc_elfmod_find((uintptr_t)&getpid, &fresh));
	ck_assert_int_eq(mappings_of(path), mapped + 1);
	mc_symbolize_end();
	ck_assert_int_eq(mappings_of(path), mapped);
}
END_TEST

/* Reading an object's files faults in none of their pages: the ELF
 * header's page and the section headers' (with their names) are
 * populated, one call each, before their first read (a page fault costs
 * 15-35 us here; two a file were taken), and the symbol table at its
 * first read.  The faults are the kernel's own record of them (a
 * software perf event sampling every fault's address, which a populate
 * does not raise; getrusage counts both), against the file mappings
 * the find made. */
struct span_list {
	uintptr_t lo[64], hi[64];
	int n;
};

static void file_mappings(struct span_list *l)
{
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	l->n = 0;
	while (fgets(line, sizeof line, f) && l->n < 64) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && strchr(line, '/')) {
			l->lo[l->n] = lo;
			l->hi[l->n++] = hi;
		}
	}
	fclose(f);
}

static bool spans_have(const struct span_list *l, uintptr_t lo)
{
	for (int i = 0; i < l->n; i++)
		if (l->lo[i] == lo)
			return true;
	return false;
}

START_TEST(headers_populated_not_faulted)
{
	int fresh;
	mc_elfmod_forget(true);
	if (!mc_elfmod_find((uintptr_t)&getpid, &fresh))
		return;   /* the C library left to libdw here: nothing read */
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_period = 1,
				     .sample_type = PERF_SAMPLE_ADDR, .disabled = 1,
				     .exclude_kernel = 1, .exclude_hv = 1 };
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;   /* perf events not allowed here: nothing to count with */
	size_t len = 4096 * (1 + 64);
	struct perf_event_mmap_page *meta = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
						 fd, 0);
	ck_assert_ptr_ne(meta, MAP_FAILED);
	struct span_list before, after;
	mc_elfmod_forget(true);   /* the files mapped afresh */
	file_mappings(&before);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	struct mc_elfmod *m = mc_elfmod_find((uintptr_t)&getpid, &fresh);
	bool dummy;
	mc_elfmod_name(m, (uintptr_t)&getpid, &dummy);  /* the table's first read */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ck_assert_ptr_nonnull(m);
	file_mappings(&after);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	const char *data = (const char *)meta + 4096;
	int faults = 0, samples = 0;
	for (uint64_t at = 0; at < head && head <= 64 * 4096;) {
		const struct perf_event_header *h = (const void *)(data + at);
		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t addr;
			memcpy(&addr, h + 1, sizeof addr);
			samples++;
			for (int i = 0; i < after.n; i++)
				if (!spans_have(&before, after.lo[i]) && addr >= after.lo[i] &&
				    addr < after.hi[i])
					faults++;
		}
		at += h->size;
	}
	munmap(meta, len);
	close(fd);
	ck_assert_msg(faults == 0, "reading %s's files: %d page faults on them (of %d)",
		      mc_elfmod_path(m), faults, samples);
	mc_elfmod_forget(true);
}
END_TEST

START_TEST(scopes_as_libdw_walks)
{
	if (!libdw_session())
		return;         /* no libdw: no inlined frames */
	Dwfl_Module *mod = lw.addrmodule(lw.d, (Dwarf_Addr)(uintptr_t)&record_return_address);
	ck_assert_ptr_nonnull(mod);
	Dwarf_Addr lo, hi;
	lw.info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	mc_opt.symbolize = 1;
	int compared = 0, inlined = 0;
	for (Dwarf_Addr a = lo; a < hi; a += (hi - lo) / 2000 + 1) {
		Dwarf_Addr bias;
		Dwarf_Die *cu = lw.addrdie(mod, a, &bias);
		Dwarf_Die *inner = NULL, *scopes = NULL;
		int ninner = cu ? lw.getscopes(cu, a - bias, &inner) : 0, first = 0;
		while (first < ninner && lw.tag(&inner[first]) != DW_TAG_inlined_subroutine &&
		       lw.tag(&inner[first]) != DW_TAG_subprogram)
			first++;
		int nscopes = first < ninner ? lw.getscopes_die(&inner[first], &scopes) : 0;
		const char *want[MC_MAX_INLINE];
		int n = 0;
		for (int i = 0; i < nscopes && n < MC_MAX_INLINE; i++) {
			int tag = lw.tag(&scopes[i]);
			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
				continue;
			Dwarf_Attribute at;
			want[n++] = lw.attr_integrate(&scopes[i], DW_AT_name, &at) ?
				    lw.formstring(&at) : NULL;
			if (tag == DW_TAG_subprogram)
				break;
		}
		free(inner);
		free(scopes);
		if (!n)
			continue;  /* the symbol table's name alone */
		struct mc_frame_info fi[MC_MAX_INLINE];
		int got = mc_symbolize_frames((uintptr_t)a + 1, fi, MC_MAX_INLINE);
		ck_assert_msg(got == n, "0x%lx: memcheck %d frames, libdw %d",
			      (unsigned long)(a - lo), got, n);
		for (int i = 0; i < n; i++)
			ck_assert_msg(!want[i] || strcmp(fi[i].function, want[i]) == 0,
				      "0x%lx frame %d: memcheck %s, libdw %s", (unsigned long)(a - lo),
				      i, fi[i].function, want[i]);
		compared++;
		inlined += n > 1;
	}
	mc_symbolize_end();
	lw_forget();
	lw.end(lw.d);
	/* the day it was written: 833, 137 inlined; under ASan (a larger
	 * program, the same samples) 473, 90 */
	ck_assert_int_gt(compared, 250);
	ck_assert_int_gt(inlined, 40);
}
END_TEST

int main(void)
{
	/* The first session reads debug info of every loaded object. */
	TCase *tc = h_tcase("symbolize", 60);
	tcase_add_test(tc, own_frame_has_file_and_line);
	tcase_add_test(tc, session_survives_end);
	tcase_add_test(tc, libc_function);
	tcase_add_test(tc, garbage_pcs);
	tcase_add_test(tc, fallback_without_symbolize);
	tcase_add_test(tc, library_loaded_later);
	tcase_add_test(tc, inlined_frames);
	tcase_add_test(tc, repeated_frames);
	tcase_add_test(tc, quick_frames);
	tcase_add_test(tc, debug_strings_filtered_exactly);
	tcase_add_test(tc, names_as_libdw_chooses);
	tcase_add_test(tc, own_reading_as_libdw);
	tcase_add_test(tc, modules_reported_as_proc_report);
	tcase_add_test(tc, scopes_as_libdw_walks);
	tcase_add_test(tc, table_mapped_at_once);
	tcase_add_test(tc, quick_scan_as_full_test);
	tcase_add_test(tc, paths_from_the_lent_maps_read);
	tcase_add_test(tc, files_left_mapped_at_exit);
	tcase_add_test(tc, headers_populated_not_faulted);
	return h_run_suite(NULL);
}
