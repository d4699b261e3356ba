/*
 * elfsym.c - the dynamic linker's symbol lookup, done by hand: which
 * loaded object defines a name, read from each object's own dynamic
 * symbol table and hash table.
 *
 * memcheck must find the allocator's functions without touching the
 * allocator, and dlsym cannot promise that.  A lookup that fails calls
 * malloc for dlerror's message (jemalloc has no pvalloc, tcmalloc no
 * reallocarray), and dlopen(RTLD_NOLOAD), to get an object's own handle,
 * has the dynamic linker allocate 56 bytes: that one block, served at
 * start-up and freed by dlclose, changed mimalloc 2.0.9's layout for the
 * rest of the run (it purged a segment early: a three-phase program
 * peaked at 73 MB instead of the bare run's 99.4 MB).  Reading the tables
 * allocates nothing.
 *
 * The second trap is the executable's canonical PLT entry.  A non-PIE
 * program that takes malloc's address lists malloc in its own dynamic
 * symbol table, undefined but with the address of its PLT stub, and
 * dlsym(RTLD_DEFAULT) returns that stub: calling it jumps back into
 * memcheck, forever (Debian's /usr/bin/python3).  An undefined symbol is
 * never a definition here, whatever its value.
 *
 * Objects are visited in load order (dl_iterate_phdr), which at start-up
 * is the order of the global lookup scope: the program, the preloaded
 * objects, then their dependencies breadth first.  "After" an object
 * means later in that order, as RTLD_NEXT does.  Objects loaded later
 * with RTLD_LOCAL are visited too, at the end: a C++ plugin's libstdc++
 * is found even though dlsym(RTLD_NEXT) would not see it.
 */
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

struct lookup {
	const char *name;
	uint32_t gnu_hash; /* the SysV hash is reckoned where an object lacks GNU's */
	const void *anchor;     /* map start of the object looked in or after */
	bool only;              /* in the anchor alone, not after it */
	bool past;              /* the anchor has been visited */
	void *found;
	size_t size;            /* the found symbol's st_size */
	const void *where;
};

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = h * 33 + *p;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h = (h << 4) + *p;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

struct tables {
	const ElfW(Sym) *sym;
	const char *str;
	size_t strsz;
	const uint32_t *gnu, *sysv;
	const ElfW(Half) *versym;
	uintptr_t bias;
};

/* The dynamic linker rewrites most objects' DT_* addresses in place with
 * the load bias added; an object whose dynamic section is read-only (the
 * vDSO) keeps them as link-time addresses, which lie below the bias. */
static const void *dyn_ptr(uintptr_t v, uintptr_t bias)
{
	return (const void *)(v < bias ? v + bias : v);
}

static bool read_tables(const struct dl_phdr_info *info, struct tables *t)
{
	/* stores, not the C library's memset: a lazy binding of every
	 * start-up, a left-out process's too */
	*t = (struct tables){ .bias = info->dlpi_addr };
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return false; /* a static program: nothing dynamic to find */
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			t->sym = dyn_ptr(dyn->d_un.d_ptr, t->bias);
			break;
		case DT_STRTAB:
			t->str = dyn_ptr(dyn->d_un.d_ptr, t->bias);
			break;
		case DT_STRSZ:
			t->strsz = dyn->d_un.d_val;
			break;
		case DT_GNU_HASH:
			t->gnu = dyn_ptr(dyn->d_un.d_ptr, t->bias);
			break;
		case DT_HASH:
			t->sysv = dyn_ptr(dyn->d_un.d_ptr, t->bias);
			break;
		case DT_VERSYM:
			t->versym = dyn_ptr(dyn->d_un.d_ptr, t->bias);
			break;
		}
	}
	return t->sym && t->str && (t->gnu || t->sysv);
}

/* Is symbol i a definition of name that dlsym would return?  Defined
 * (a canonical PLT entry is undefined, whatever its value), global or
 * weak, code or data, and not a hidden (non-default) version. */
static bool defines(const struct tables *t, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &t->sym[i];
	if (s->st_shndx == SHN_UNDEF || s->st_value == 0)
		return false;
	if (t->strsz && s->st_name >= t->strsz)
		return false;
	/* ST_BIND and ST_TYPE are the same in ELF32 and ELF64 */
	unsigned bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
	if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
		return false;
	/* STT_TLS: "found" at the bias plus its offset in the object's
	 * thread-local block, which dlstate.c takes back apart. */
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT &&
	    type != STT_NOTYPE && type != STT_COMMON && type != STT_TLS)
		return false;
	if (t->versym && (t->versym[i] & 0x8000))
		return false;
	return strcmp(t->str + s->st_name, name) == 0;
}

static const ElfW(Sym) *find_gnu(const struct tables *t, const struct lookup *l)
{
	const uint32_t *h = t->gnu;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
	if (!nbuckets || !bloom_size)
		return NULL;
	const ElfW(Addr) *bloom = (const void *)&h[4];
	const uint32_t *buckets = (const void *)&bloom[bloom_size];
	const uint32_t *chain = &buckets[nbuckets];
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	uint32_t hash = l->gnu_hash;
	ElfW(Addr) word = bloom[(hash / bits) % bloom_size];
	ElfW(Addr) mask = ((ElfW(Addr))1 << (hash % bits)) |
			  ((ElfW(Addr))1 << ((hash >> shift) % bits));
	if ((word & mask) != mask)
		return NULL;
	uint32_t i = buckets[hash % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t h2 = chain[i - symoffset];
		if ((hash | 1) == (h2 | 1) && defines(t, i, l->name))
			return &t->sym[i];
		if (h2 & 1)
			return NULL;
	}
}

static const ElfW(Sym) *find_sysv(const struct tables *t, const struct lookup *l)
{
	const uint32_t *h = t->sysv;
	uint32_t nbucket = h[0], nchain = h[1];
	if (!nbucket)
		return NULL;
	const uint32_t *bucket = &h[2], *chain = &bucket[nbucket];
	for (uint32_t i = bucket[sysv_hash(l->name) % nbucket], n = 0; i && i < nchain && n < nchain;
	     i = chain[i], n++)
		if (defines(t, i, l->name))
			return &t->sym[i];
	return NULL;
}

static void *address(const struct tables *t, const ElfW(Sym) *s)
{
	void *a = (void *)(t->bias + s->st_value);
	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC) {
		/* What the dynamic linker calls: the resolver, given the
		 * hardware capabilities (x86-64's ignores them). */
		void *(*resolver)(unsigned long) = (void *(*)(unsigned long))a;
		a = resolver(getauxval(AT_HWCAP));
	}
	return a;
}

/* The address of l's symbol in the object of tables t, or NULL. */
static void *found_in(const struct tables *t, const struct lookup *l)
{
	const ElfW(Sym) *s = t->gnu ? find_gnu(t, l) : find_sysv(t, l);
	return s ? address(t, s) : NULL;
}

/* A lookup of name: its GNU hash, reckoned once (every object but an
 * old one has a GNU hash table; the SysV hash cost as much again). */
static struct lookup lookup_of(const char *name)
{
	return (struct lookup){ .name = name, .gnu_hash = gnu_hash(name) };
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lookup *l = arg;
	const void *start = mc_object_map_start(info);
	if (l->anchor && !l->past) {
		if (start == l->anchor) {
			l->past = true;
			if (!l->only)
				return 0; /* after it, not in it */
		} else {
			return 0;
		}
	} else if (l->only) {
		return 1; /* the anchor was looked in: done */
	}
	struct tables t;
	if (!read_tables(info, &t))
		return 0;
	const ElfW(Sym) *s = t.gnu ? find_gnu(&t, l) : find_sysv(&t, l);
	if (!s || !(l->found = address(&t, s)))
		return 0;
	l->size = s->st_size;
	l->where = start;
	return 1;
}

/* A walk of the objects for a look-up: in a forked child, the one its
 * fork handlers noted while it holds (objects.c): a wrapper's first call
 * there (prlimit, setuid, at_quick_exit after the fork) ran the C
 * library's dl_iterate_phdr and faulted its 64 KiB block, which the bare
 * child never maps (test_rss_self's forklittle: rss_end +68/+72/+24/+80
 * KiB over the bare child's, glibc/mimalloc/jemalloc/tcmalloc). */
static int walk(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	int rc = mc_walk_objects_noted(fn, arg);
	return rc != -2 ? rc : mc_walk_objects(fn, arg);
}

static void *lookup(const void *anchor, bool only, const char *name, const void **where,
		    size_t *size)
{
	struct lookup l = lookup_of(name);
	l.anchor = anchor;
	l.only = only;
	walk(visit, &l);
	if (where)
		*where = l.found ? l.where : NULL;
	if (size)
		*size = l.found ? l.size : 0;
	return l.found;
}

void *mc_sym_in(const void *base, const char *name)
{
	return base ? lookup(base, true, name, NULL, NULL) : NULL;
}

void *mc_sym_in_sized(const void *base, const char *name, size_t *size)
{
	*size = 0;
	return base ? lookup(base, true, name, NULL, size) : NULL;
}

struct lookup_each {
	const void *base;
	const char *const *names;
	void **found;
	size_t n;
};

/* found[i]: names[i]'s definition in the object of tables t, or NULL. */
static void found_each(const struct tables *t, const char *const *names, void **found, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct lookup l = lookup_of(names[i]);
		found[i] = found_in(t, &l);
	}
}

static int visit_each(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lookup_each *e = arg;
	struct tables t;
	if (mc_object_map_start(info) != e->base)
		return 0;
	if (read_tables(info, &t))
		found_each(&t, e->names, e->found, e->n);
	return 1;
}

/* One walk of the objects and one read of the object's tables for all
 * the names: the forwarding table's ten names were ten walks of every
 * loaded object (dl_iterate_phdr, each object's program headers), 24 K
 * instructions of every process's start-up, a left-out one's too. */
void mc_sym_in_each(const void *base, const char *const *names, void **found, size_t n)
{
	for (size_t i = 0; i < n; i++)
		found[i] = NULL;
	if (!base || !n)
		return;
	struct lookup_each e = { base, names, found, n };
	walk(visit_each, &e);
}

void *mc_sym_first(const char *name, const void **where)
{
	return lookup(NULL, false, name, where, NULL);
}

/* libmemcheck's own mapping starts with its ELF header (the linker's
 * __ehdr_start); linked from libmemcheck.a, that is the program's. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

void *mc_sym_next(const char *name, const void **where)
{
	return lookup(__ehdr_start, false, name, where, NULL);
}

void *mc_sym_next_cached(const char *name, void **cache)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!f) {
		f = mc_sym_next(name, NULL); /* allocates nothing */
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

struct next_each {
	struct lookup l[MC_SYM_EACH_MAX];
	void **found;
	size_t n, left;
	bool past; /* libmemcheck's object has been visited */
};

/* The objects after libmemcheck's, in walk order: each name not found
 * yet is looked up in this one's tables (have: they were read). */
static void next_visit(struct next_each *e, struct dl_phdr_info *info, const struct tables *t,
		       bool have)
{
	if (!e->left)
		return;
	if (!e->past) {
		e->past = mc_object_map_start(info) == (const void *)__ehdr_start;
		return;
	}
	if (!have)
		return;
	for (size_t i = 0; i < e->n; i++)
		if (!e->found[i] && (e->found[i] = found_in(t, &e->l[i])))
			e->left--;
}

static void next_start(struct next_each *e, const struct mc_sym_next_req *req)
{
	size_t n = req ? req->n : 0;
	if (n > MC_SYM_EACH_MAX)
		n = MC_SYM_EACH_MAX;
	*e = (struct next_each){ .found = req ? req->found : NULL, .n = n, .left = n };
	for (size_t i = 0; req && i < req->n; i++)
		req->found[i] = NULL;
	for (size_t i = 0; i < n; i++)
		e->l[i] = lookup_of(req->names[i]);
}

struct first_but {
	struct lookup l;
	const void *skip;
	void *first, *found;
	const void *where;
	const char *const *names;
	void **each;
	size_t n;
	struct next_each next;
};

static int visit_first_but(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct first_but *f = arg;
	struct tables t;
	bool have = read_tables(info, &t);
	next_visit(&f->next, info, &t, have);
	if (!f->found && have) {
		void *a = found_in(&t, &f->l);
		if (a && !f->first) {
			f->first = a;
			if (a == f->skip)
				a = NULL; /* memcheck's own: the next definition */
		}
		if (a) {
			f->found = a;
			f->where = mc_object_map_start(info);
			found_each(&t, f->names, f->each, f->n);
		}
	}
	return f->found && !f->next.left;
}

/* name's first definition (mc_sym_first), or when that is skip (which
 * only libmemcheck's object defines), the next one after it
 * (mc_sym_next); *first gets the first, *where the start of the object
 * of the one returned, and names[i] are looked up in that same object
 * (mc_sym_in_each); next's names, when given, as mc_sym_next finds
 * them.  One walk of the objects, where those made four (next's was a
 * walk of its own, dl_iterate_phdr and each object's tables read again:
 * ~3 K instructions of every process's start, a left-out one's too). */
void *mc_sym_first_but(const char *name, const void *skip, void **first, const void **where,
		       const char *const *names, void **found, size_t n,
		       const struct mc_sym_next_req *next)
{
	struct first_but f = { .l = lookup_of(name), .skip = skip, .names = names,
			       .each = found, .n = n };
	next_start(&f.next, next);
	for (size_t i = 0; i < n; i++)
		found[i] = NULL;
	walk(visit_first_but, &f);
	*first = f.first;
	*where = f.found ? f.where : NULL;
	return f.found;
}

/* Whether the program itself (the first object in load order) refers to
 * name without defining it: an undefined entry of its dynamic symbol
 * table, weak or not, as a program that calls memcheck_begin has, linked
 * with libmemcheck or only preloaded (life.c: its regions' RSS figures
 * are measured from start-up).  With a GNU hash table the undefined
 * entries are those below its symoffset, which the link puts first and
 * the table does not hash: only they are read. */
static int refers_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tables t;
	if (!read_tables(info, &t))
		return -1;
	uint32_t n = t.gnu ? t.gnu[1] : t.sysv[1];
	for (uint32_t i = 1; i < n; i++) {
		const ElfW(Sym) *s = &t.sym[i];
		if (s->st_shndx == SHN_UNDEF && (!t.strsz || s->st_name < t.strsz) &&
		    strcmp(t.str + s->st_name, (const char *)arg) == 0)
			return 1;
	}
	return -1; /* the program only */
}

bool mc_program_refers(const char *name)
{
	return mc_walk_objects(refers_visit, (void *)name) == 1;
}
