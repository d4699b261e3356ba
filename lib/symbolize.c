/*
 * symbolize.c - turn a return address into function, file:line and object
 * for the reports.  libdw is opened with dlopen only when the first report
 * needs it, so programs that never report do not pay for loading it and
 * the library has no link-time dependency on elfutils.  Without libdw (or
 * with MEMCHECK_SYMBOLIZE=0) dladdr gives what the dynamic symbol tables
 * know: exported function names and objects, no file:line.
 *
 * Runs with the recursion guard held, so libdw may allocate freely; this
 * file itself never calls malloc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>

#include "internal.h"

/* Entry points of libdw, typed from its header but never linked. */
static struct {
	__typeof__(dwfl_begin) *begin;
	__typeof__(dwfl_end) *end;
	__typeof__(dwfl_linux_proc_report) *proc_report;
	__typeof__(dwfl_report_end) *report_end;
	__typeof__(dwfl_addrmodule) *addrmodule;
	__typeof__(dwfl_module_addrname) *addrname;
	__typeof__(dwfl_module_getsrc) *getsrc;
	__typeof__(dwfl_lineinfo) *lineinfo;
	__typeof__(dwfl_module_info) *module_info;
	__typeof__(dwfl_build_id_find_debuginfo) *build_id_find_debuginfo;
	/* For sym_table; optional: without them each name is looked up by
	 * dwfl_module_addrname. */
	__typeof__(dwfl_module_getsymtab) *getsymtab;
	__typeof__(dwfl_module_getsymtab_first_global) *first_global;
	__typeof__(dwfl_module_getsym_info) *getsym_info;
	bool symtab;
	/* For inlined frames; optional: without them each address is one
	 * frame, named after the function it was inlined into. */
	__typeof__(dwfl_module_addrdie) *addrdie;
	__typeof__(dwarf_getscopes) *getscopes;
	__typeof__(dwarf_getscopes_die) *getscopes_die;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_attr_integrate) *attr_integrate;
	__typeof__(dwarf_attr) *attr;
	__typeof__(dwarf_formstring) *formstring;
	__typeof__(dwarf_formudata) *formudata;
	__typeof__(dwarf_getsrcfiles) *getsrcfiles;
	__typeof__(dwarf_filesrc) *filesrc;
	bool inlines;
	/* For modules without .debug_aranges (cu_by_walk); optional: without
	 * them their frames have no file:line. */
	__typeof__(dwfl_module_getdwarf) *getdwarf;
	__typeof__(dwarf_nextcu) *nextcu;
	__typeof__(dwarf_offdie) *offdie;
	__typeof__(dwarf_ranges) *ranges;
	__typeof__(dwarf_getsrc_die) *getsrc_die;
	__typeof__(dwarf_linesrc) *linesrc;
	__typeof__(dwarf_lineno) *lineno;
	bool cu_walk;
} dw;

enum { DW_UNTRIED, DW_LOADED, DW_MISSING };
static int dw_state = DW_UNTRIED;

/* libdwfl keeps a pointer to its callbacks for the session's lifetime. */
static Dwfl_Callbacks callbacks;
static char *debuginfo_path;
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name);
static Dwfl *session;
static pid_t session_pid;

/* libdwfl is not thread-safe and two threads may report at once. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void copy(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src ? src : "", n);
	dst[n] = 0;
}

static bool load_libdw(void)
{
	if (dw_state != DW_UNTRIED)
		return dw_state == DW_LOADED;
	dw_state = DW_MISSING;
	/* RTLD_LOCAL: libdw's symbols must not satisfy the program's own
	 * lookups (it may link a different elfutils). */
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	/* A missing symbol means an elfutils too old or odd to trust.  It
	 * stays loaded: unloading a library with constructors is riskier
	 * than the memory. */
#define LOAD(field, name) \
	if (!(field = (__typeof__(field))dlsym(h, name))) \
		return false
	LOAD(dw.begin, "dwfl_begin");
	LOAD(dw.end, "dwfl_end");
	LOAD(dw.proc_report, "dwfl_linux_proc_report");
	LOAD(dw.report_end, "dwfl_report_end");
	LOAD(dw.addrmodule, "dwfl_addrmodule");
	LOAD(dw.addrname, "dwfl_module_addrname");
	LOAD(dw.getsrc, "dwfl_module_getsrc");
	LOAD(dw.lineinfo, "dwfl_lineinfo");
	LOAD(dw.module_info, "dwfl_module_info");
	LOAD(callbacks.find_elf, "dwfl_linux_proc_find_elf");
	dw.addrdie = dlsym(h, "dwfl_module_addrdie");
	dw.getscopes = dlsym(h, "dwarf_getscopes");
	dw.getscopes_die = dlsym(h, "dwarf_getscopes_die");
	dw.tag = dlsym(h, "dwarf_tag");
	dw.attr_integrate = dlsym(h, "dwarf_attr_integrate");
	dw.attr = dlsym(h, "dwarf_attr");
	dw.formstring = dlsym(h, "dwarf_formstring");
	dw.formudata = dlsym(h, "dwarf_formudata");
	dw.getsrcfiles = dlsym(h, "dwarf_getsrcfiles");
	dw.filesrc = dlsym(h, "dwarf_filesrc");
	dw.inlines = dw.addrdie && dw.getscopes && dw.getscopes_die && dw.tag && dw.attr_integrate &&
		     dw.attr && dw.formstring && dw.formudata && dw.getsrcfiles &&
		     dw.filesrc;
	dw.getdwarf = dlsym(h, "dwfl_module_getdwarf");
	dw.nextcu = dlsym(h, "dwarf_nextcu");
	dw.offdie = dlsym(h, "dwarf_offdie");
	dw.ranges = dlsym(h, "dwarf_ranges");
	dw.getsrc_die = dlsym(h, "dwarf_getsrc_die");
	dw.linesrc = dlsym(h, "dwarf_linesrc");
	dw.lineno = dlsym(h, "dwarf_lineno");
	dw.cu_walk = dw.getdwarf && dw.nextcu && dw.offdie && dw.ranges && dw.getsrc_die &&
		     dw.linesrc && dw.lineno;
	dw.getsymtab = dlsym(h, "dwfl_module_getsymtab");
	dw.first_global = dlsym(h, "dwfl_module_getsymtab_first_global");
	dw.getsym_info = dlsym(h, "dwfl_module_getsym_info");
	dw.symtab = dw.getsymtab && dw.first_global && dw.getsym_info;
	LOAD(dw.build_id_find_debuginfo, "dwfl_build_id_find_debuginfo");
	callbacks.find_debuginfo = find_debuginfo;
#undef LOAD
	callbacks.debuginfo_path = &debuginfo_path;
	dw_state = DW_LOADED;
	return true;
}

/* Where libdwfl looks for a module's separate debug information: the
 * build-id tree (/usr/lib/debug/.build-id, where Debian's -dbgsym
 * packages put it), then the module's .gnu_debuglink name beside it, in
 * .debug/ beside it, and under /usr/lib/debug.  dwfl_standard_find_debuginfo
 * searches the same places and then asks debuginfod, which makes libdw
 * load libdebuginfod, libcurl, libssh2 and OpenSSL into the program --
 * at exit, after the program's own OpenSSL has cleaned up, that crashes
 * it.  memcheck never fetches debug information over the network. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dw.build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					    crc, debuginfo_file_name);
	if (fd >= 0 || !file_name || !debuglink || !*debuglink || strchr(debuglink, '/'))
		return fd;
	const char *slash = strrchr(file_name, '/');
	int dirlen = slash ? (int)(slash - file_name) : 0;
	static const char *const fmt[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
	for (size_t i = 0; i < MC_ARRAY_SIZE(fmt); i++) {
		char path[4096];
		if (snprintf(path, sizeof path, fmt[i], dirlen, file_name, debuglink) >=
		    (int)sizeof path || strcmp(path, file_name) == 0)
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			*debuginfo_file_name = strdup(path); /* libdwfl frees it */
			return fd;
		}
	}
	errno = 0; /* not found is not an error to libdwfl */
	return -1;
}

/* Address ranges sorted by start, each with the largest end up to it,
 * so that those covering an address are found by a binary search and a
 * short walk back (ranges rarely overlap): compile units and symbols. */
struct range {
	Dwarf_Addr start, end;
	Dwarf_Addr maxend;  /* the largest end of this and every earlier range */
	uint64_t what;      /* a unit's DIE offset; a symbol's index */
};

/* Heapsort by start: in place, without malloc (qsort may call it). */
static void sift(struct range *r, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && r[c + 1].start > r[c].start)
			c++;
		if (r[i].start >= r[c].start)
			return;
		struct range t = r[i];
		r[i] = r[c];
		r[c] = t;
	}
}

/* By start, and each range's maxend.  An LSD radix sort of start less
 * the lowest start, 11 bits a pass, as many passes as the spread needs
 * (two for the C library's 2 MiB): a heapsort of its 8,000 symbols took
 * ~3 M instructions, more than all the names a process's exit looks up.
 * The heapsort remains for when there is no memory for the copy. */
static void ranges_sort(struct range *r, size_t n)
{
	Dwarf_Addr lo = n ? r[0].start : 0, spread = 0;
	for (size_t i = 1; i < n; i++)
		lo = r[i].start < lo ? r[i].start : lo;
	for (size_t i = 0; i < n; i++)
		spread |= r[i].start - lo;
	struct range *tmp = n > 1 ? mc_map(n * sizeof *r) : NULL;
	if (tmp) {
		struct range *from = r, *to = tmp;
		for (int shift = 0; shift < 64 && spread >> shift; shift += 11) {
			uint32_t at[2048] = { 0 };
			for (size_t i = 0; i < n; i++)
				at[(from[i].start - lo) >> shift & 2047]++;
			for (uint32_t d = 0, sum = 0; d < 2048; d++) {
				uint32_t c = at[d];
				at[d] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
				to[at[(from[i].start - lo) >> shift & 2047]++] = from[i];
			struct range *x = from;
			from = to;
			to = x;
		}
		if (from != r)
			memcpy(r, from, n * sizeof *r);
		mc_unmap(tmp, n * sizeof *r);
	} else {
		for (size_t i = n / 2; i-- > 0;)
			sift(r, i, n);
		for (size_t i = n; i-- > 1;) {
			struct range x = r[0];
			r[0] = r[i];
			r[i] = x;
			sift(r, 0, i);
		}
	}
	for (size_t i = 0; i < n; i++)
		r[i].maxend = i && r[i - 1].maxend > r[i].end ? r[i - 1].maxend : r[i].end;
}

/* The ranges that cover a, the latest start first, into out[0, max).
 * Returns how many; max + 1 when there are more than max or the walk
 * back takes more than `steps` ranges (the caller then asks otherwise). */
static size_t ranges_covering(const struct range *r, size_t n, Dwarf_Addr a,
			      const struct range **out, size_t max, size_t steps)
{
	size_t lo = 0, hi = n, k = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && r[i].maxend > a;) {
		if (!steps--)
			return max + 1;
		if (r[i].end > a) {
			if (k == max)
				return max + 1;
			out[k++] = &r[i];
		}
	}
	return k;
}

/* libdw 0.188 finds the compile unit of an address only through
 * .debug_aranges, which clang does not write (without -gdwarf-aranges):
 * dwfl_module_getsrc and dwfl_module_addrdie then find nothing although
 * the line tables are there.  For such a module the address ranges of
 * its compile units are read once, the first time its lookup fails, into
 * a table sorted by start address (mmap'd, through mc_buf).  An address
 * in no unit at all (code built without -g) costs a search in it. */
struct cu_table {
	bool built;
	struct mc_buf buf;  /* struct range[n] */
	size_t n;
};

static void cu_table_free(struct cu_table *t)
{
	mc_buf_free(&t->buf);
	*t = (struct cu_table){ 0 };
}

static void cu_table_build(struct cu_table *t, Dwarf *dbg)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	t->built = true;
	while (dw.nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Addr base, start, end;
		if (dw.offdie(dbg, off + hsize, &die))
			for (ptrdiff_t o = 0; (o = dw.ranges(&die, o, &base, &start, &end)) > 0;) {
				/* Start 0: code the linker discarded. */
				struct range r = { start, end, end, off + hsize };
				if (start && start < end)
					mc_buf_put(&t->buf, (const char *)&r, sizeof r);
			}
		off = next;
	}
	t->n = t->buf.oom ? 0 : t->buf.len / sizeof(struct range);
	ranges_sort((struct range *)t->buf.s, t->n);
}

/* dwfl_module_addrname walks the module's whole symbol table through
 * libelf for every address: ~8,000 symbols for the C library's (its
 * debug file's .symtab), ~150 us a name, most of the cost of matching
 * suppressions at a process's exit.  sym_table reads the table once
 * into a flat array of the symbols that search can choose, in libdw's
 * order, and sym_lookup makes libdw's choice over it (libdwfl's
 * __libdwfl_addrsym, step for step: globals first; the closest symbol
 * below the address whose size covers it, among equals the better
 * binding, then the smaller size, then the first; a size-0 symbol in
 * the address's section as the fallback) -- the same name for every
 * address.  A module whose values are not plain st_value + bias
 * (function descriptors) is left to dwfl_module_addrname. */
struct sym_entry {
	GElf_Addr value;    /* st_value + its file's bias */
	GElf_Xword size;
	const char *name;   /* in libelf's copy of the string table */
	GElf_Word shndx;
	unsigned char bind; /* binding_value: global 3, weak 2, local 1, other 0 */
};

/* One pass of the search (globals or locals): its symbols with a size
 * as ranges (what: the index in v); its lowest size-0 symbol in a
 * section, and the span of its size-0 absolute ones (symbol versions,
 * at 0), which count only at their own address. */
struct sym_pass {
	struct range *r;
	size_t n;
	GElf_Addr min_sizeless;
	GElf_Addr abs_lo, abs_hi;
};

struct sym_table {
	bool built;
	struct sym_entry *v;
	size_t n, mapped;
	size_t nlocal;      /* v[0, nlocal): the locals, searched second */
	bool usable;        /* false: ask dwfl_module_addrname */
	struct sym_pass pass[2]; /* [0] the globals, [1] the locals */
	struct range *spans;     /* both passes' r, in one mapping */
	size_t spans_mapped;
};

static void sym_table_free(struct sym_table *t)
{
	if (t->v)
		mc_unmap(t->v, t->mapped);
	if (t->spans)
		mc_unmap(t->spans, t->spans_mapped);
	*t = (struct sym_table){ 0 };
}

/* What is built for a module once, on first need; a few modules at a
 * time (the program and the libraries it leaks from), the oldest
 * replaced. */
struct mod_cache {
	Dwfl_Module *mod;       /* NULL: a free slot */
	struct cu_table cu;     /* its compile units, where libdw finds none */
	struct sym_table sym;   /* its symbols, for names */
};

static struct mod_cache mod_caches[16];
static unsigned mod_caches_next;

static void mod_cache_free(struct mod_cache *c)
{
	cu_table_free(&c->cu);
	sym_table_free(&c->sym);
	c->mod = NULL;
}

static struct mod_cache *mod_cache(Dwfl_Module *mod)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(mod_caches); i++)
		if (mod_caches[i].mod == mod)
			return &mod_caches[i];
	struct mod_cache *c = &mod_caches[mod_caches_next++ % MC_ARRAY_SIZE(mod_caches)];
	mod_cache_free(c);
	c->mod = mod;
	return c;
}

/* The compile unit DIE of addr in mod, found through mod's table; NULL
 * when mod has no DWARF or no unit covers addr.  *bias: mod's. */
static Dwarf_Die *cu_by_walk(Dwfl_Module *mod, uintptr_t addr, Dwarf_Die *die, Dwarf_Addr *bias)
{
	Dwarf *dbg = dw.cu_walk ? dw.getdwarf(mod, bias) : NULL;
	if (!dbg)
		return NULL;
	struct cu_table *t = &mod_cache(mod)->cu;
	if (!t->built)
		cu_table_build(t, dbg);
	/* The last range starting at or before a, then back over those that
	 * may still reach past it (units' ranges rarely overlap). */
	const struct range *r;
	if (ranges_covering((const struct range *)t->buf.s, t->n, addr - *bias, &r, 1, SIZE_MAX))
		return dw.offdie(dbg, r->what, die);
	return NULL;
}

static unsigned char binding_value(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Each pass's symbols with a size, sorted (the search in sym_fast);
 * without the memory, every name takes the walk of the whole table. */
static void sym_passes_build(struct sym_table *t)
{
	t->spans_mapped = t->n * sizeof *t->spans;
	t->spans = t->n ? mc_map(t->spans_mapped) : NULL;
	if (!t->spans)
		return;
	size_t k = 0;
	for (int p = 0; p < 2; p++) {
		struct sym_pass *ps = &t->pass[p];
		size_t from = p ? 0 : t->nlocal, to = p ? t->nlocal : t->n;
		ps->r = t->spans + k;
		ps->min_sizeless = ps->abs_lo = (GElf_Addr)-1;
		ps->abs_hi = 0;
		for (size_t i = from; i < to; i++) {
			const struct sym_entry *e = &t->v[i];
			if (!e->size && e->shndx >= SHN_LORESERVE) {
				ps->abs_lo = e->value < ps->abs_lo ? e->value : ps->abs_lo;
				ps->abs_hi = e->value > ps->abs_hi ? e->value : ps->abs_hi;
				continue;
			}
			/* A size that wraps the address space: libdw's test
			 * (addr - value < size) is no range; walk that pass. */
			if (!e->size || e->value + e->size < e->value) {
				if (e->value < ps->min_sizeless)
					ps->min_sizeless = e->size ? 0 : e->value;
				continue;
			}
			t->spans[k++] = (struct range){ e->value, e->value + e->size, 0, i };
		}
		ps->n = (size_t)(t->spans + k - ps->r);
		ranges_sort(ps->r, ps->n);
	}
}

static void sym_table_build(struct sym_table *t, Dwfl_Module *mod)
{
	int n = dw.getsymtab(mod), first_global = dw.first_global(mod);
	t->built = true;
	if (n <= 1 || first_global < 0)
		return;
	t->mapped = (size_t)n * sizeof *t->v;
	t->v = mc_map(t->mapped);
	if (!t->v)
		return;
	/* libdw searches the globals first (from 1 when first_global is 0),
	 * then, finding nothing, the locals. */
	int gstart = first_global == 0 ? 1 : first_global;
	for (int pass = 0; pass < 2; pass++) {
		int from = pass ? gstart : 1, to = pass ? n : gstart;
		if (!pass && first_global <= 1)
			continue;
		for (int i = from; i < to; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			GElf_Word shndx;
			Elf *elf;
			Dwarf_Addr bias;
			const char *name = dw.getsym_info(mod, i, &sym, &value, &shndx, &elf,
							 &bias);
			if (!name || !name[0] || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
			    GELF_ST_TYPE(sym.st_info) == STT_FILE ||
			    GELF_ST_TYPE(sym.st_info) == STT_TLS)
				continue;
			/* Resolved (function descriptors): libdw's way.
			 * Absolute symbols keep their st_value. */
			if (shndx < SHN_LORESERVE && value != sym.st_value + bias)
				return;
			t->v[t->n++] = (struct sym_entry){ value, sym.st_size, name, shndx,
							   binding_value(sym.st_info) };
		}
		if (!pass)
			t->nlocal = t->n;
	}
	t->usable = true;
	sym_passes_build(t);
}

/* One search: libdw's struct search_state, less what only a section
 * lookup needs. */
struct sym_search {
	const struct sym_table *t;
	GElf_Addr addr;
	const struct sym_entry *closest, *sizeless;
	GElf_Addr min_label;
	bool ask_libdw;       /* a section lookup was needed */
};

/* One symbol of the search, in the table's order. */
static void sym_visit(struct sym_search *s, const struct sym_entry *e)
{
	const struct sym_entry *c = s->closest;
	if (e->value > s->addr)
		return;
	if (e->value + e->size > s->min_label)
		s->min_label = e->value + e->size;
	if (e->size && s->addr - e->value >= e->size)
		return;
	if (!c || c->value < e->value || c->bind < e->bind) {
		if (e->size) {
			s->closest = e;
		} else if (!c && e->value >= s->min_label) {
			/* A size-0 symbol counts in the address's section
			 * only; absolute ones at the address only. */
			if (e->shndx < SHN_LORESERVE)
				s->ask_libdw = true;
			else if (e->value == s->addr)
				s->sizeless = e;
		}
	} else if (e->size && c->value == e->value &&
		   ((c->size > e->size && c->bind <= e->bind) ||
		    (c->size >= e->size && c->bind < e->bind))) {
		s->closest = e;
	}
}

static void sym_search(struct sym_search *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		sym_visit(s, &s->t->v[i]);
}

/* sym_search's answer without the walk, where it depends only on the
 * symbols with a size that cover addr: a symbol that does not cover it
 * moves only min_label, which matters only to size-0 symbols, and a
 * size-0 one is chosen (or sends the search to libdw, whose answer is
 * then the same) only when no sized one covers addr.  So where sized
 * ones cover addr in a pass, they decide, visited in the table's order;
 * where none does and the pass has no size-0 symbol at or below addr,
 * the pass finds nothing and the locals are searched next, as libdw
 * does.  false: a size-0 symbol may be chosen, or the covering ones are
 * too many to find cheaply; the walk decides. */
static bool sym_fast(struct sym_search *s)
{
	const struct sym_table *t = s->t;
	for (int p = 0; p < 2; p++) {
		const struct sym_pass *ps = &t->pass[p];
		const struct range *c[8];
		size_t k = ranges_covering(ps->r, ps->n, s->addr, c, MC_ARRAY_SIZE(c), 64);
		if (k > MC_ARRAY_SIZE(c))
			return false;
		for (size_t i = 1; i < k; i++)  /* back into the table's order */
			for (size_t j = i; j > 0 && c[j - 1]->what > c[j]->what; j--) {
				const struct range *x = c[j];
				c[j] = c[j - 1];
				c[j - 1] = x;
			}
		for (size_t i = 0; i < k; i++)
			sym_visit(s, &t->v[c[i]->what]);
		if (k)
			return true;
		if (ps->min_sizeless <= s->addr ||
		    (ps->abs_lo <= s->addr && s->addr <= ps->abs_hi))
			return false;
	}
	return true;
}

static const char *sym_name(Dwfl_Module *mod, GElf_Addr addr)
{
	if (!dw.symtab)
		return dw.addrname(mod, addr);
	struct sym_table *t = &mod_cache(mod)->sym;
	if (!t->built)
		sym_table_build(t, mod);
	if (!t->usable)
		return dw.addrname(mod, addr);
	struct sym_search s = { .t = t, .addr = addr };
	if (t->spans && sym_fast(&s))
		return s.closest ? s.closest->name : NULL;
	sym_search(&s, t->nlocal, t->n);
	if (!s.closest && t->nlocal && (!s.sizeless || s.sizeless->value != addr))
		sym_search(&s, 0, t->nlocal);
	if (s.ask_libdw)
		return dw.addrname(mod, addr);
	if (!s.closest && s.sizeless && s.sizeless->value >= s.min_label)
		s.closest = s.sizeless;
	return s.closest ? s.closest->name : NULL;
}

static void end_session(void)
{
	if (session)
		dw.end(session);
	session = NULL;
	for (size_t i = 0; i < MC_ARRAY_SIZE(mod_caches); i++)
		mod_cache_free(&mod_caches[i]);
}

static Dwfl *get_session(void)
{
	/* A forked child (check runs each test in one) inherits the parent's
	 * session, whose module list names the parent's pid. */
	pid_t pid = getpid();
	if (session && session_pid != pid)
		end_session();
	if (session)
		return session;
	Dwfl *d = dw.begin(&callbacks);
	if (!d)
		return NULL;
	if (dw.proc_report(d, pid) != 0 || dw.report_end(d, NULL, NULL) != 0) {
		dw.end(d);
		return NULL;
	}
	session = d;
	session_pid = pid;
	return session;
}

static const char *die_name(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	/* An inlined copy names its function through DW_AT_abstract_origin,
	 * which attr_integrate follows. */
	if (dw.attr_integrate(die, at, &a))
		return dw.formstring(&a);
	return NULL;
}

/* The functions inlined at addr, innermost first: out[0] is the code the
 * address is in, out[1] the function that code was inlined into, and so
 * on up to the function that is really there.  out[0] already holds the
 * address's own file:line and object; each caller gets the line of the
 * inlined call.  cu is addr's compile unit when the caller found it
 * (with mod's bias), else NULL.  Returns how many frames out[] now holds
 * (at least 1). */
static int resolve_inlines(Dwfl_Module *mod, uintptr_t addr, Dwarf_Die *cu, Dwarf_Addr bias,
			   struct mc_frame_info *out, int max)
{
	if (!dw.inlines)
		return 1;
	if (!cu)
		cu = dw.addrdie(mod, addr, &bias);
	Dwarf_Die *inner = NULL, *scopes = NULL;
	int ninner = cu ? dw.getscopes(cu, addr - bias, &inner) : 0;
	/* getscopes goes from the innermost scope through the inlined
	 * function's abstract definition; the concrete chain of callers
	 * comes from the scopes that contain that innermost function. */
	int first = 0;
	while (first < ninner && dw.tag(&inner[first]) != DW_TAG_inlined_subroutine &&
	       dw.tag(&inner[first]) != DW_TAG_subprogram)
		first++;
	int nscopes = first < ninner ? dw.getscopes_die(&inner[first], &scopes) : 0;
	free(inner);
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	char sym[sizeof out->linkage];  /* the symbol table's name at addr */
	copy(sym, sizeof sym, out->linkage);
	const char *call_file = NULL;
	int call_line = 0, n = 0;
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dw.tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (n > 0) {
			/* A caller: same address and object, the inlined
			 * call's file:line. */
			out[n] = out[0];
			copy(out[n].file, sizeof out[n].file, call_file);
			out[n].line = call_file ? call_line : 0;
		}
		const char *name = die_name(&scopes[i], DW_AT_name);
		if (name)
			copy(out[n].function, sizeof out[n].function, name);
		const char *lk = die_name(&scopes[i], DW_AT_linkage_name);
		copy(out[n].linkage, sizeof out[n].linkage,
		     lk ? lk : tag == DW_TAG_subprogram ? sym : "");
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		Dwarf_Attribute a;
		Dwarf_Word file = 0, line = 0;
		call_file = NULL;
		if (dw.attr(&scopes[i], DW_AT_call_file, &a) && dw.formudata(&a, &file) == 0 &&
		    dw.attr(&scopes[i], DW_AT_call_line, &a) && dw.formudata(&a, &line) == 0 &&
		    (files || dw.getsrcfiles(cu, &files, &nfiles) == 0) && file < nfiles) {
			call_file = dw.filesrc(files, file, NULL, NULL);
			call_line = (int)line;
		}
	}
	free(scopes);
	return n ? n : 1;
}

/* full: file, line and inlined frames too; otherwise the symbol table's
 * name alone, which does not make libdw read the DWARF (tens of ms for
 * the C library's, where its debug information is installed). */
static int resolve_dwfl(uintptr_t addr, struct mc_frame_info *out, int max, bool full)
{
	Dwfl *d = get_session();
	if (!d)
		return 1;
	Dwfl_Module *mod = dw.addrmodule(d, addr);
	if (!mod)
		return 1;
	const char *fn = sym_name(mod, addr);
	if (fn && *fn) {
		copy(out->function, sizeof out->function, fn);
		/* Debug symbol tables name versioned symbols dlopen@GLIBC_2.2.5;
		 * the program called dlopen. */
		char *at = strchr(out->function, '@');
		if (at && at != out->function)
			*at = 0;
		/* GCC's local alias of a global function is that function. */
		size_t len = strlen(out->function);
		if (len > 11 && strcmp(out->function + len - 11, ".localalias") == 0)
			out->function[len - 11] = 0;
		copy(out->linkage, sizeof out->linkage, out->function);
	}
	Dwfl_Line *l = full ? dw.getsrc(mod, addr) : NULL;
	Dwarf_Die cubuf, *cu = NULL;
	Dwarf_Addr bias = 0;
	const char *file = NULL;
	int line = 0;
	if (l) {
		file = dw.lineinfo(l, NULL, &line, NULL, NULL, NULL);
	} else if (full && (cu = cu_by_walk(mod, addr, &cubuf, &bias))) {
		Dwarf_Line *dl = dw.getsrc_die(cu, addr - bias);
		if (dl && dw.lineno(dl, &line) == 0)
			file = dw.linesrc(dl, NULL, NULL);
	}
	if (file && *file) {
		copy(out->file, sizeof out->file, file);
		out->line = line;
	}
	const char *mainfile = NULL;
	const char *name = dw.module_info(mod, NULL, NULL, NULL, NULL, NULL,
					  &mainfile, NULL);
	/* mainfile is set once the ELF file was opened (addrname did that);
	 * the module name is the path from /proc/self/maps otherwise. */
	if (mainfile && *mainfile)
		copy(out->object, sizeof out->object, mainfile);
	else if (name && name[0] == '/')
		copy(out->object, sizeof out->object, name);
	return full && max > 1 ? resolve_inlines(mod, addr, cu, bias, out, max) : 1;
}

/* An address in the system's libraries (/usr/lib, /lib): with
 * MEMCHECK_SYMBOLIZE_SYSTEM=0 their DWARF, large where it is installed
 * (libc's takes ~40 ms to load), is left alone; their symbol tables'
 * names, which suppression files match, are still read. */
static bool in_system_object(uintptr_t addr)
{
	const char *name = NULL;
	if (!addr || !mc_object_base((void *)addr, &name) || !name)
		return false;
	if (!name[0]) {
		/* the main program: dladdr names it by argv[0] */
		Dl_info info;
		if (!dladdr((void *)addr, &info) || !info.dli_fname)
			return false;
		name = info.dli_fname;
	}
	return strncmp(name, "/usr/lib/", 9) == 0 || strncmp(name, "/lib/", 5) == 0 ||
	       strncmp(name, "/lib64/", 7) == 0;
}

int mc_symbolize_frames(uintptr_t pc, struct mc_frame_info *out, int max)
{
	/* The call instruction ends just before the return address; pc-1
	 * lies inside it even when the call is a function's last one. */
	uintptr_t addr = pc ? pc - 1 : 0;
	int n = 1;

	out->function[0] = 0;
	out->linkage[0] = 0;
	out->file[0] = 0;
	out->line = 0;
	out->object[0] = 0;

	pthread_mutex_lock(&lock);
	if (mc_opt.symbolize && load_libdw())
		n = resolve_dwfl(addr, out, max,
				 mc_opt.symbolize_system || !in_system_object(addr));
	pthread_mutex_unlock(&lock);

	/* dladdr fills what libdw could not: a module reported after the
	 * session began, or a system without libdw. */
	if (!out->function[0] || !out->object[0]) {
		Dl_info info;
		if (addr && dladdr((void *)addr, &info)) {
			if (!out->function[0] && info.dli_sname && *info.dli_sname)
				copy(out->function, sizeof out->function, info.dli_sname);
			if (!out->object[0] && info.dli_fname)
				copy(out->object, sizeof out->object, info.dli_fname);
		}
	}
	if (!out->function[0])
		copy(out->function, sizeof out->function, "???");
	/* C code and frames without debug information: one name. */
	for (int i = 0; i < n; i++)
		if (!out[i].linkage[0])
			copy(out[i].linkage, sizeof out[i].linkage, out[i].function);
	return n;
}

void mc_symbolize(uintptr_t pc, struct mc_frame_info *out)
{
	mc_symbolize_frames(pc, out, 1);
}

void mc_symbolize_end(void)
{
	pthread_mutex_lock(&lock);
	end_session();
	pthread_mutex_unlock(&lock);
}
