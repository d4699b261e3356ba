/*
 * supp_region.c - suppressions at a region's end: which files to read,
 * reading them the first time a region leaves a record that needs
 * matching (most regions leave nothing, and most that do leave only what
 * is still reachable, whose matching region.c asks for only when
 * something reads its outcome: most programs never pay), moving what
 * they match into "suppressed", and writing entries for what they do not
 * (MEMCHECK_GEN_SUPPRESSIONS).  The format and the matching are
 * suppress.c's; this file is the library's side of them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#ifndef MC_SUPPDIR
#define MC_SUPPDIR "/usr/local/share/memcheck/suppressions"
#endif

static struct mc_supps *supps;
static bool loaded;
static bool light, light_off;    /* the exit's verdicts without the set */
static size_t light_n;           /* the set's entries, then */
static char bad[200];            /* the first file that did not parse */
static char self[1024];          /* libmemcheck's path, for obj: patterns */
static bool failed;              /* a file of this load did not parse, or
				  * had a note (load_note): not kept */

/* A note on a file that is read (an entry skipped as valgrind skips
 * it): its own function, its string with those no default exit reads
 * (text-order.ld).  The load is not kept then (suppcache.c): a warm
 * cache's set, not parsed, said nothing at later runs (session 43's
 * nameless entry, noted once only). */
static __attribute__((noinline, cold)) void load_note(const char *err)
{
	failed = true;
	mc_log("suppressions: %s", err);
}

/* A file of MEMCHECK_SUPPRESSIONS (named) or of a directory of the
 * library's not read: said, and the region fails.  The variable is named
 * where it gave the file, as for every other option's bad value (harden46:
 * "suppressions not read: 1e3: No such file or directory" said neither
 * where the name came from nor what was expected). */
static void read_failed(const char *err, bool named)
{
	if (named && !strstr(err, "expected"))
		mc_log("MEMCHECK_SUPPRESSIONS: suppressions not read: %s (expected valgrind "
		       "suppression files, memcheck-suppressions(5), joined by colons)", err);
	else if (named)
		mc_log("MEMCHECK_SUPPRESSIONS: suppressions not read: %s", err);
	else
		mc_log("suppressions not read: %s", err);
	failed = true;
	if (!bad[0])
		snprintf(bad, sizeof bad, "%s", err);
}

/* io: a buffer kept for the next file, or NULL */
static void load_file(const char *path, struct mc_supp_io *io, bool named)
{
	char err[512];
	mc_suppcache_note(path, true);   /* before the read: a later edit shows */
	if (io ? mc_supp_load_io(supps, path, io, err, sizeof err)
	       : mc_supp_load(supps, path, err, sizeof err)) {
		if (err[0])
			load_note(err);
		return;
	}
	read_failed(err, named);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Every *.supp in dir, in name order; false when dir cannot be opened.
 * getdents64 rather than opendir, which would call malloc.  The names
 * packed on the stack: a static table of 64 names of 256 bytes was 16 KiB
 * of .bss, two pages faulted in at every exit that loaded suppressions. */
static bool load_dir(const char *dir, int *why)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT && errno != ENOTDIR && !*why)
		*why = errno;
	mc_suppcache_note(dir, fd >= 0);  /* its mtime: the entries it has */
	if (fd < 0)
		return false;
	char pool[4096]; /* the shipped directory: eight names, 108 bytes */
	struct {
		const char *name;
		bool regular;      /* DT_REG: read without fstat */
	} f[64], t;
	size_t used = 0;
	int n = 0;
	char buf[4096] __attribute__((aligned(8)));
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen;
				 unsigned char type; char name[]; } *d = (void *)(buf + off);
			off += d->reclen;
			size_t len = strlen(d->name);
			if (n < 64 && has_suffix(d->name, ".supp") && len < 256 &&
			    len < sizeof pool - used) {
				f[n].regular = d->type == DT_REG;
				f[n++].name = memcpy(pool + used, d->name, len + 1);
				used += len + 1;
			}
		}
	}
	close(fd);
	for (int i = 1; i < n; i++)        /* a handful: insertion sort */
		for (int j = i; j > 0 && strcmp(f[j - 1].name, f[j].name) > 0; j--) {
			t = f[j];
			f[j] = f[j - 1];
			f[j - 1] = t;
		}
	struct mc_supp_io io = { 0 };   /* one buffer for all the files */
	/* the paths by copies: snprintf took 7 K instructions of a
	 * measured /bin/date's exit for the shipped eight */
	char path[1536];
	size_t dlen = strlen(dir);
	if (dlen + 1 < sizeof path) {
		memcpy(path, dir, dlen);
		path[dlen++] = '/';
	}
	for (int i = 0; i < n && dlen < sizeof path; i++) {
		size_t len = strlen(f[i].name);
		io.regular = f[i].regular;
		if (dlen + len < sizeof path) {
			memcpy(path + dlen, f[i].name, len + 1);
			load_file(path, &io, false);
		}
	}
	mc_supp_io_free(&io);
	return true;
}

/* The shipped files: beside the libmemcheck that is loaded (an installed
 * copy's share/memcheck/suppressions, the build tree's suppressions/),
 * else where make install puts them. */
static void load_defaults(void)
{
	char dir[1024 + 64];
	int why = 0;   /* a directory there but not opened: said below */
	const char *slash = strrchr(self, '/');
	/* the library's directory's parent, named in messages and reports */
	const char *up = slash ? memrchr(self, '/', (size_t)(slash - self)) : NULL;
	if (slash && up) {
		static const char *const rel[] = { "/share/memcheck/suppressions",
						   "/suppressions" };
		for (size_t i = 0; i < MC_ARRAY_SIZE(rel); i++) {
			snprintf(dir, sizeof dir, "%.*s%s", (int)(up - self), self, rel[i]);
			if (load_dir(dir, &why))
				return;
		}
	}
	if (!load_dir(MC_SUPPDIR, &why) && why)
		/* A test at its descriptor limit (soft and hard alike, which
		 * rlimits.c cannot lift) got the shipped files' blocks as
		 * leaks with no word of why. */
		mc_log("shipped suppressions not read: %s; none applied", strerror(why));
}

/* libmemcheck's own path, made absolute while the working directory is
 * still the one the dynamic linker opened it from (LD_PRELOAD may name
 * it relative to that).  At start-up, from the library's constructor. */
void mc_suppress_init(void)
{
	/* The link map's name, as dladdr's, without dladdr's walk of the
	 * library's symbols for the nearest (~3,000 instructions with its
	 * lazy binding); dladdr where that names the program itself
	 * (libmemcheck.a linked in), which dladdr names by argv[0]. */
	const char *name = NULL;
	mc_object_base((const void *)mc_suppress_init, &name);
	Dl_info info;
	if (!name || !name[0])
		name = dladdr((void *)mc_suppress_init, &info) ? info.dli_fname : NULL;
	if (!name)
		return;
	char abs[PATH_MAX];
	/* Made absolute and without "..": load_defaults takes the parent
	 * of the library's directory by its text, which a ".." defeats.  A
	 * program linked with -rpath '$ORIGIN/../..' (the tests' own, and
	 * many a build tree's) loads build/tests/prog/../../libmemcheck.so,
	 * whose textual parent is build/tests/prog: none of the shipped
	 * files were read, and that empty set was cached ("/./" likewise).
	 * realpath only then: a path without them keeps the name it was
	 * loaded by (an
	 * installed copy reached through a symbolic link finds the files
	 * of the tree it was linked into, as before). */
	bool resolve = name[0] != '/' || strstr(name, "/../") || strstr(name, "/./");
	/* Not snprintf: vfprintf's first call, in start-up, faulted in
	 * 192 KiB of the C library counted as memcheck's (fault.c). */
	mc_copy_name(self, sizeof self, resolve && realpath(name, abs) ? abs : name);
}

/* The freeres functions memcheck ran itself, at the exit under
 * valgrind's text (life.c): MC_FREERES_CXX | MC_FREERES_LIBC. */
unsigned mc_freeres_ran;
int mc_freeres_alone = -1;

/* The freeres functions whose blocks the shipped entries marked for
 * them ("# freeres:") must leave in use: under valgrind's command line
 * with --run-libc-freeres=no or --run-cxx-freeres=no valgrind reports
 * those blocks still reachable (its own suppressions do not take them);
 * and where memcheck ran that freeres itself before judging (valgrind's
 * text, at exit), what it freed is gone, and what is left the function
 * does not free: valgrind lists it (a libidn2 the C library loaded for
 * getaddrinfo, which __libc_freeres never closes: glibc-2.36-libc-dlopen
 * took its 1,715 bytes in 5 blocks).  Elsewhere memcheck judges the
 * blocks before any freeres runs, and the entries take them. */
/* And under valgrind's command line the entries marked "# valgrind:
 * lists" (MC_SUPP_VALGRIND_LISTS), which stand for what valgrind itself
 * reports, with its own suppressions, and memcheck's own reports take
 * out: a running thread's DTV, possibly lost under valgrind (its
 * __libc_freeres frees only the DTVs of glibc's stack cache, which the
 * "# freeres: libc" entries take where memcheck could not run it: a
 * process that exits with another thread running). */
/* A process a fatal signal ends (fatal.c's mc_fatal_sig): valgrind runs
 * no freeres there and lists what they would free (a C++ program that
 * dies of an uncaught exception: libstdc++'s 72,704-byte pool, still
 * reachable; a C program that used stdio and setlocale and aborts: 139
 * blocks), as with both off.  But libstdc++'s pool only where the
 * program loaded libstdc++: jemalloc and tcmalloc bring it to a C
 * program, valgrind, whose allocator serves the program, does not, and
 * has no pool to list (its entries then applied, as before). */
static __attribute__((noinline)) unsigned fatal_runs(void)
{
	static int cxx_listed = -1;
	if (cxx_listed < 0)
		cxx_listed = mc_needed_besides("libstdc++", mc_real.object);
	return cxx_listed ? 0 : (unsigned)mc_opt.valgrind_freeres & MC_FREERES_CXX;
}

static unsigned freeres_off(void)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return 0;
	unsigned runs = mc_fatal_sig ? fatal_runs() : (unsigned)mc_opt.valgrind_freeres;
	return ((~runs | mc_freeres_ran) & (MC_FREERES_CXX | MC_FREERES_LIBC)) |
	       MC_SUPP_VALGRIND_LISTS;
}
/* freeres_off as the loaded set was read with */
static unsigned loaded_off;

/* What decides which files a load reads, the cache's key: the library's
 * path (the shipped directory's candidates), whether the shipped files
 * are read (and which of their freeres entries), the user's list.
 * false: too long to keep. */
static bool cache_key(char *key, size_t cap, size_t *len)
{
	/* copies (memcheck run's, a directory of its own each run) by the
	 * user's names: one entry the run's processes share, its files'
	 * stamps those of the run's copies */
	const char *user = mc_opt.suppressions_names && *mc_opt.suppressions_names
				   ? mc_opt.suppressions_names
				   : mc_opt.suppressions ? mc_opt.suppressions : "";
	size_t a = strlen(self), b = strlen(user);
	if (a + b + 3 + 12 > cap)
		return false;
	memcpy(key, self, a + 1);
	key[a + 1] = mc_opt.default_suppressions ? (char)('1' + freeres_off()) : '0';
	memcpy(key + a + 2, user, b);
	*len = a + 2 + b;
	/* the user's files as valgrind's --num-callers cut them */
	int lines = mc_vgtext_supp_lines();
	if (lines) {
		key[(*len)++] = 0;
		*len = (size_t)(mc_utoa(key + *len, (uint64_t)lines) - key);
	}
	return true;
}

/* The files MEMCHECK_SUPPRESSIONS names.  A function of its own: its
 * path (4 KiB) is on the stack only where files are read, not under the
 * cache's look-up (load), where a warm process's exit reached deepest,
 * each page of that depth a page fault. */
static __attribute__((noinline)) void load_named(void)
{
	/* the user's names of the files, where these are copies (memcheck
	 * run's: MEMCHECK_SUPPRESSIONS_NAMES), one for each, in order */
	const char *names = mc_opt.suppressions_names && *mc_opt.suppressions_names
				    ? mc_opt.suppressions_names : NULL;
	for (const char *p = mc_opt.suppressions; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char path[4096], name[4096];
		const char *ncolon = names ? strchr(names, ':') : NULL;
		size_t nlen = names ? (ncolon ? (size_t)(ncolon - names) : strlen(names)) : 0;
		if (len && len < sizeof path) {
			memcpy(path, p, len);
			path[len] = 0;
			struct mc_supp_io io = { 0 };
			if (nlen && nlen < sizeof name) {
				memcpy(name, names, nlen);
				name[nlen] = 0;
				io.name = name;
			}
			load_file(path, &io, true);
			mc_supp_io_free(&io);
		} else if (len) {
			/* skipped without a word before session 45: the
			 * region passed with the file's entries unread */
			char err[160];
			snprintf(err, sizeof err, "%.48s...: a path of %zu bytes, longer than "
				 "the system takes (4095: ENAMETOOLONG)", p, len);
			read_failed(err, true);
		}
		p = colon ? colon + 1 : p + len;
		if (names)
			names = ncolon ? ncolon + 1 : names + nlen;
	}
}

static void load(void)
{
	loaded = true;
	loaded_off = freeres_off();
	if (!self[0])
		mc_suppress_init();
	/* The set a process with these inputs parsed, if every file it
	 * read is as it was (suppcache.c): stats, no read, no parse. */
	char key[sizeof self + 4096 + 8];
	size_t keylen = 0;
	bool keep = cache_key(key, sizeof key, &keylen);
	if (keep && (supps = mc_suppcache_get(key, keylen)))
		return;
	supps = mc_supp_new();
	if (!supps) {
		mc_log("no memory for suppressions: none applied");
		return;
	}
	failed = false;
	if (keep)
		mc_suppcache_begin(key, keylen);
	if (mc_opt.default_suppressions) {
		mc_supp_drop_freeres(supps, loaded_off);
		load_defaults();
		mc_supp_drop_freeres(supps, 0);
	}
	/* the user's files are read as valgrind reads them; the shipped
	 * ones, memcheck's own, whole */
	mc_supp_read_lines(supps, mc_vgtext_supp_lines());
	load_named();
	/* a file that did not parse or had a note: its messages, every time */
	if (keep && !failed)
		mc_suppcache_put(supps);
}

struct memo;

/* A leak record's stack, symbolized only as far as matching reads it:
 * the frames (debug information read, inlined calls expanded) and the
 * quick view (symbol tables' names, one frame a return address), each
 * frame resolved once however many entries look at it. */
struct lazy {
	const uintptr_t *pcs;
	int npcs, next;
	struct mc_frame_info *f;
	int n, cap;
	struct mc_frame_info *q;  /* [npcs], quick frames */
	bool *deep;               /* [npcs] */
	int nq;                   /* q[0, nq) resolved */
	struct memo *memo;        /* the region's, for may_name */
	size_t *nmemo;
};

static const struct mc_frame_info *lazy_frame(void *arg, int i)
{
	struct lazy *z = arg;
	while (z->n <= i && z->next < z->npcs && z->n < z->cap) {
		int room = z->cap - z->n;
		z->n += mc_symbolize_frames(z->pcs[z->next++], &z->f[z->n],
					    room < MC_MAX_INLINE ? room : MC_MAX_INLINE);
	}
	return i < z->n ? &z->f[i] : NULL;
}

static const struct mc_frame_info *quick_frame(void *arg, int i, bool *deep)
{
	struct lazy *z = arg;
	if (i >= z->npcs)
		return NULL;
	while (z->nq <= i) {
		mc_symbolize_quick(z->pcs[z->nq], &z->q[z->nq], &z->deep[z->nq]);
		z->nq++;
	}
	*deep = z->deep[i];
	return &z->q[i];
}

/* may_name's answers for this region's records, by (return address,
 * pattern): a return address is in many records, and each entry asks
 * again.  The slots index the entries, which are filled in order, so
 * that the few answers a short process keeps lie in one page: a table
 * of the entries themselves (24 KiB, probed before written) was 12 page
 * faults of a leaking bench/suite_test 5's exit, two a page (a read maps
 * the zero page, the write then copies it).  At most half the slots
 * used; past that, asked anew. */
#define MEMO_SLOTS 1024
#define AHEAD 64
struct memo {
	/* The stacks of the first AHEAD records as name_ahead decoded
	 * them (mc_stack_get_code's check of each frame, ~500
	 * instructions a stack), for matching at this call and the next
	 * (the records a first call keeps, in their order): the depot's
	 * frames, which stay. */
	struct dec {
		const uintptr_t *pcs;
		uint32_t stack;
		int32_t n;
	} dec[AHEAD];
	uint32_t ndec;
	uint16_t slot[MEMO_SLOTS];  /* 1 + an entry's index, 0 free */
	struct memo_entry {
		uintptr_t pc;
		const char *s;
		bool found;
	} e[MEMO_SLOTS / 2];
};
/* after suppress.c's cache of the quick frames' names, whose slots and
 * first entries are its first page */
#define MEMO_MAPPED (MC_SUPP_NAMES_BYTES + sizeof(struct memo))
/* the deep flags, the quick frames and the full ones */
#define FRAMES_BYTES ((size_t)MC_MAX_DEPTH * 3 * sizeof(struct mc_frame_info) + \
		      (size_t)MC_MAX_DEPTH * sizeof(bool))

static bool may_name(void *arg, int i, const char *s, size_t len)
{
	struct lazy *z = arg;
	uintptr_t pc = z->pcs[i];
	size_t h = (size_t)(((pc ^ (uintptr_t)s) * 0x9e3779b97f4a7c15ull) >> 54) & (MEMO_SLOTS - 1);
	struct memo *m = z->memo;
	for (; m && m->slot[h]; h = (h + 1) & (MEMO_SLOTS - 1)) {
		const struct memo_entry *e = &m->e[m->slot[h] - 1];
		if (e->pc == pc && e->s == s)
			return e->found;
	}
	bool found = mc_symbolize_may_name(pc, s, len);
	if (m && pc && *z->nmemo < MEMO_SLOTS / 2) {
		m->e[*z->nmemo] = (struct memo_entry){ pc, s, found };
		m->slot[h] = (uint16_t)++*z->nmemo;
	}
	return found;
}

/* Is the quick view sure to see every frame: can the frames, each deep
 * one expanded into at most MC_MAX_INLINE, not run past the cap where
 * lazy_frame stops? */
static bool quick_covers(struct lazy *z)
{
	int deep = 0;
	bool d;
	if (z->npcs * MC_MAX_INLINE <= z->cap)
		return true;
	for (int i = 0; i < z->npcs; i++)
		deep += quick_frame(z, i, &d) && d;
	return z->npcs + deep * (MC_MAX_INLINE - 1) <= z->cap;
}

/* The stack an entry is written from: past the allocation functions
 * (allocfn.c), which the entry's leading '...' stands for with malloc,
 * so that it names the real site and still matches the full stack. */
struct past {
	const struct mc_supp_stack *st;
	int skip;
};

static const struct mc_frame_info *past_frame(void *arg, int i)
{
	const struct past *p = arg;
	return p->st->frame(p->st->arg, i + p->skip);
}

/* Not inlined: its frames (8 KiB) were mc_suppress_region's in every
 * process, under each exit's matching and naming, where only
 * MEMCHECK_GEN_SUPPRESSIONS runs it.  Not where valgrind's text lists
 * the records: each listed one's entry follows it there, as valgrind
 * writes them (vgtext.c). */
static size_t *freed_errors; /* below */

static __attribute__((noinline, cold)) void gen(const char *region, const struct mc_leak *l,
						const struct mc_supp_stack *full)
{
	/* the region's report, which freed_errors points into (nothing
	 * more stored on mc_suppress_region's way, which every leaking
	 * exit runs): the process's records, where valgrind's text lists
	 * them */
	const struct mc_supp_report *out =
		(const void *)((const char *)freed_errors -
			       offsetof(struct mc_supp_report, freed_errors));
	if (out->at_exit && mc_vgtext_gen_listed())
		return;
	const uintptr_t *pcs;
	int npcs = mc_stack_get_code(l->stack, &pcs);
	struct mc_frame_info fi[MC_MAX_INLINE];
	struct past skip = { full, mc_allocfn_lead(pcs, npcs, fi) };
	struct mc_supp_stack past = { .frame = past_frame, .arg = &skip };
	const struct mc_supp_stack *st = skip.skip ? &past : full;
	static _Atomic unsigned counter;
	char name[200], safe[160];
	/* One line in the file: a newline in the region name must not end it. */
	snprintf(name, sizeof name, "memcheck-%s-%u", mc_text_escape(region, safe, sizeof safe),
		 atomic_fetch_add(&counter, 1) + 1);
	struct mc_buf b = { 0 };
	mc_supp_format(&b, name, (int)l->kind, st);
	if (b.oom) {
		mc_log("out of memory writing a suppression for region \"%s\"", region);
	} else if (strcmp(mc_opt.gen_suppressions, "-") == 0) {
		mc_write_all(mc_text_fd(), b.s, b.len);
	} else {
		static _Atomic int said;
		mc_append(mc_opt.gen_suppressions, b.s, b.len, "MEMCHECK_GEN_SUPPRESSIONS", &said,
			  mc_opt.text_timeout);
	}
	mc_buf_free(&b);
}

/* Shell sort in place: qsort would take memory for a merge sort (parson's
 * exit: ~25 page faults of memcheck's own heap). */
static void sort_pcs(uintptr_t *v, size_t n)
{
	static const size_t gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	for (size_t g = 0; g < MC_ARRAY_SIZE(gaps); g++)
		for (size_t i = gaps[g]; i < n; i++) {
			uintptr_t x = v[i];
			size_t j = i;
			for (; j >= gaps[g] && v[j - gaps[g]] > x; j -= gaps[g])
				v[j] = v[j - gaps[g]];
			v[j] = x;
		}
}

/* The distinct addresses of the first records' stacks into v (cap of
 * them), their count.  A function of its own: its table of those seen
 * (4 KiB) is off the stack before the names are read, the exit's
 * deepest path, where each 4 KiB deeper was a page fault. */
static __attribute__((noinline)) size_t ahead_pcs(const struct mc_leak *groups, size_t n,
						  struct memo *dec, uintptr_t *v, size_t cap)
{
	const uintptr_t *pcs;
	/* An address already taken is not taken again (the records' stacks
	 * share most of their frames): the sort then orders the distinct
	 * ones, where sorting them all was ~27,000 instructions of a
	 * measured /bin/date's exit.  Past SEEN / 2 distinct addresses the
	 * rest go in unfiltered; the sort and the pass after it drop what
	 * is left twice all the same. */
	enum { SEEN = 512 };
	uintptr_t seen[SEEN] = { 0 };
	size_t nseen = 0, k = 0;
	for (size_t i = 0; i < n && i < AHEAD; i++) {
		int m = mc_stack_get_code(groups[i].stack, &pcs);
		if (dec) {
			dec->dec[i] = (struct dec){ pcs, groups[i].stack, m };
			dec->ndec = (uint32_t)i + 1;
		}
		for (int j = 0; j < m && k < cap; j++) {
			uintptr_t pc = pcs[j];
			if (pc && nseen < SEEN / 2) {
				size_t h = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 55);
				while (seen[h] && seen[h] != pc)
					h = (h + 1) & (SEEN - 1);
				if (seen[h])
					continue;
				seen[h] = pc;
				nseen++;
			}
			v[k++] = pc;
		}
	}
	return k;
}

/* Every distinct return address of the first records (AHEAD of them),
 * named before matching reads them one at a time: an object's symbol
 * table is then read once for all of its addresses, and never sorted
 * whole (the C library's 10,000 symbols, ~1 M instructions and 320 KiB,
 * for a few dozen addresses).  Past that many records the sorted table
 * pays for itself, and each record's stack costs a decoding of its own
 * (parson's exit, 1,058 records: 8 M instructions for all of them). */
static void name_ahead(const struct mc_leak *groups, size_t n, bool at_exit,
		       struct memo *dec)
{
	size_t cap = (n < AHEAD ? n : AHEAD) * MC_MAX_DEPTH;
	size_t bytes = cap * sizeof(uintptr_t);
	/* Room for the most (MC_MAX_DEPTH a record, 32 KiB for AHEAD of
	 * them), filled from the start: at the exit a packed piece of the
	 * tail (ownmap.c), on pages the pieces before it touched.  A lazy
	 * mapping, each 8 KiB populated by ahead_pcs before it wrote there,
	 * was at the exit a lazy piece of the tail, page-aligned past the
	 * others, which the tail does not populate for a caller: a page of
	 * its own faulted in at every leaking exit (perf trace -F all:
	 * ahead_pcs' first store, bench/suite_test 5 and a measured
	 * /bin/date, session 42's populating tail; short43).  Before the
	 * exit a populated mapping: a report of many records populates
	 * pages it may not fill. */
	uintptr_t *v = cap ? mc_map(bytes) : NULL;
	if (!v)
		return;
	size_t k = ahead_pcs(groups, n, dec, v, cap);
	sort_pcs(v, k);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	mc_symbolize_quick_many(v, u);
	if (!at_exit) /* the exit unmaps it: an munmap fewer */
		mc_unmap(v, bytes);
}

/* out->used again from out->count: the entries used so far, in the
 * files' order. */
static void list_used(struct mc_supp_report *out, size_t ns)
{
	if (out->used)
		mc_unmap(out->used, out->mapped);
	out->used = NULL;
	out->nused = out->mapped = 0;
	size_t used = 0;
	for (size_t i = 0; i < ns; i++)
		used += out->count[i].records != 0;
	if (!used || !(out->used = mc_map(used * sizeof *out->used)))
		return;
	out->mapped = used * sizeof *out->used;
	for (size_t i = 0; i < ns; i++) {
		if (!out->count[i].records)
			continue;
		struct mc_supp_used *u = &out->used[out->nused++];
		*u = out->count[i];
		/* the cache keeps the '{' line in bits 0..23, the name's
		 * line after it (valgrind's used_suppression's) above */
		int packed;
		if (light) {
			u->name = mc_suppcache_light_name(i, &u->file, &packed);
			u->line = packed & 0xffffff;
			u->name_line = u->line + (int)((unsigned)packed >> 24);
			continue;
		}
		u->name = mc_supp_name(supps, i, &u->file, &u->line, &u->name_line);
		/* for a later process that leaves the set's file unread (not
		 * kept where the packing does not fit: negative) */
		packed = u->line >> 24 ? -1 : u->line | (u->name_line - u->line) << 24;
		mc_suppcache_name_keep(i, u->name, u->file, packed);
	}
}

/* The freeres functions whose blocks this region's end counts as freed
 * (freeres_unrun), and the records of valgrind's error kinds so taken
 * (mc_supp_report's freed_errors, read by region.c). */
static unsigned freed_by;
static size_t *freed_errors;

/* The allocation stacks of the buffers of the streams the program
 * opened itself (fopen's FILE is a block of its own; stdin, stdout and
 * stderr lie in the C library's data), at a process's end by a fatal
 * signal (own_buffers), where no entry for what the C library's freeres
 * frees takes their records: valgrind runs no freeres there and lists
 * such a buffer still reachable beside its FILE (libvarlink's aborting
 * tests: 4,096 bytes), and the FILE itself is the program's in both.
 * The C library's own streams' buffers stay the entries' (glibc.supp's
 * stdio entry is meant for them).  A record is by stack: a line that
 * allocates both kinds of buffer (one function reading stdin and a
 * file) keeps its record. */
#define OWN_BUFFERS 8
#define OWN_BUFFERS_MARK 0x100u /* in freed_by: own_bufs is not 0 */
static uint32_t own_buf_stack[OWN_BUFFERS];
static unsigned own_bufs;

static __attribute__((noinline, cold)) void own_buffers(void)
{
	own_bufs = 0;
	struct _IO_FILE *const *list = mc_io_list_all ? mc_io_list_all : mc_roots_io_list();
	if (!list || !mc_opt.default_suppressions)
		return;
	/* fopen links a stream at the list's head: the program's come
	 * before the C library's three, and the walk stops at the first
	 * stream that is no block of the table's (nothing read that is not
	 * a block's or the C library's: the crash may have written over
	 * the heap) */
	for (const FILE *f = *list; f && own_bufs < OWN_BUFFERS; f = f->_chain) {
		struct mc_block b;
		if (!mc_blocks_find((uintptr_t)f, &b) || b.size < sizeof *f ||
		    ((unsigned)f->_flags & MC_IO_MAGIC_MASK) != MC_IO_MAGIC)
			return;
		uintptr_t buf = (uintptr_t)f->_IO_buf_base;
		if (!buf || (f->_flags & MC_IO_USER_BUF) || !mc_blocks_find(buf, &b))
			continue;
		own_buf_stack[own_bufs++] = b.stack;
		freed_by |= OWN_BUFFERS_MARK;
	}
}

/* The process's end under valgrind's text where memcheck could not run
 * the freeres functions valgrind runs (life.c's freeres: another thread
 * still runs, which valgrind kills first): what they free, which the
 * shipped entries marked "# freeres:" take, valgrind counts freed, in
 * neither "in use at exit" nor "suppressed" (a C++ program with a
 * thread_local and a thread running at its exit: valgrind "in use at
 * exit: 553 bytes in 4 blocks", 7 frees, nothing suppressed; memcheck
 * 73,273 bytes in 5 blocks, 6 frees, 72,704 suppressed, libstdc++'s
 * pool).  Not where a fatal signal ends the process (valgrind runs no
 * freeres there: fatal_runs).  The marks those functions: 0 elsewhere. */
/* The process's threads counted once: where life.c asked (freeres,
 * freeres_cxx), its answer.  Asked again here, a thread that ended its
 * OS exit between the two (Python's joined thread, once in 6 runs of
 * stale45's sweep) made the skipped freeres' blocks suppressed, neither
 * run nor counted freed ("suppressed: 5,756 bytes in 21 blocks", where
 * valgrind shows none). */
static __attribute__((noinline)) unsigned freeres_unrun(void)
{
	if (mc_fatal_sig || !mc_opt.default_suppressions)
		return 0;
	unsigned want = (unsigned)mc_opt.valgrind_freeres & ~mc_freeres_ran &
			(MC_FREERES_CXX | MC_FREERES_LIBC);
	if (!want)
		return 0;
	bool alone = mc_freeres_alone >= 0 ? mc_freeres_alone > 0
					    : mc_never_threaded() || mc_threads_alone();
	return alone ? 0 : want;
}

/* l's figures out of its kind's */
static inline __attribute__((always_inline)) void leave_kind(struct memcheck_result *res,
							     const struct mc_leak *l)
{
	struct memcheck_count *kc[] = { &res->definitely_lost, &res->indirectly_lost,
					&res->possibly_lost, &res->still_reachable };
	struct memcheck_count *k = kc[l->kind & 3];
	k->blocks -= l->blocks;
	k->bytes -= l->bytes;
}

/* l's figures moved into "suppressed", entry m's use counted */
static inline __attribute__((always_inline)) void suppressed_figures(
	struct memcheck_result *res, const struct mc_leak *l, long m, struct mc_supp_used *count)
{
	leave_kind(res, l);
	res->suppressed.blocks += l->blocks;
	res->suppressed.bytes += l->bytes;
	count[m].records++;
	count[m].blocks += l->blocks;
	count[m].bytes += l->bytes;
}

/* Record l, taken by entry m, counted freed where m is an entry for what
 * a freeres function frees that valgrind would have run (freed_by):
 * out of its kind, in use no more, its frees counted, no loss record of
 * valgrind's (vgtext.c); left as it is (false) where m is one for what
 * the C library's freeres frees and l a buffer of a stream the program
 * opened (own_buffers); else suppressed.  Rare: out of line, group 7. */
static __attribute__((noinline)) bool freed_or_suppressed(struct memcheck_result *res,
							  const struct mc_leak *l, long m,
							  struct mc_supp_used *count)
{
	unsigned marks = supps ? mc_supp_freeres(supps, (size_t)m) : 0;
	for (unsigned i = 0; (marks & MC_FREERES_LIBC) && i < own_bufs; i++)
		if (own_buf_stack[i] == l->stack)
			return false;
	if (!(marks & freed_by)) {
		suppressed_figures(res, l, m, count);
		return true;
	}
	leave_kind(res, l);
	res->live_blocks -= l->blocks;
	res->live_bytes -= l->bytes;
	res->frees += l->blocks;
	res->bytes_freed += l->bytes;
	*freed_errors += mc_vgtext_error_groups(l, 1);
	mc_vgtext_record_freed(l);
	return true;
}

/* l's figures moved into "suppressed" (or counted freed, or left:
 * freed_or_suppressed, false) */
static bool suppressed(struct memcheck_result *res, const struct mc_leak *l, long m,
		       struct mc_supp_used *count)
{
	if (unlikely(freed_by))
		return freed_or_suppressed(res, l, m, count);
	suppressed_figures(res, l, m, count);
	return true;
}

/* The verdicts another process kept (suppcache.c) of the records asked,
 * into v[i] (-2: none kept); true if every one has one. */
static bool kept_verdicts(const struct mc_leak *groups, size_t n, unsigned kinds, int32_t *v)
{
	bool all = true;
	for (size_t i = 0; i < n; i++) {
		v[i] = -2;
		if (!((kinds >> (groups[i].kind & 3)) & 1))
			continue;
		const uintptr_t *pcs;
		int npcs = mc_stack_get_code(groups[i].stack, &pcs);
		v[i] = (int32_t)mc_suppcache_verdict((int)groups[i].kind, pcs, npcs);
		all &= v[i] != -2;
	}
	return all;
}

/* The match of one stack for kind, its verdict kept for other processes
 * (suppcache.c): the key taken before the match, so that the states it
 * holds are those the match then saw, or older. */
static long match_kept(int kind, const struct lazy *z, const struct mc_supp_stack *st)
{
	static struct mc_buf key, links;
	key.len = links.len = 0;
	bool keep = mc_suppcache_verdict_key(kind, z->pcs, z->npcs, &key, &links);
	long m = mc_supp_match(supps, kind, st, self);
	/* not where the match named an object otherwise than its key says */
	if (keep && mc_symbolize_verdict_sound(z->pcs, z->npcs))
		mc_suppcache_verdict_put(&key, &links, m);
	return m;
}

/* Every record asked has a verdict vd[i]: those of an entry moved into
 * "suppressed", the others kept, in order, and named as matching would
 * have named them for the report that prints them (one read of each
 * object's table for all of them). */
static void take_kept(struct memcheck_result *res, struct mc_leak *groups, size_t *n,
		      unsigned kinds, const int32_t *vd, struct mc_supp_used *count, bool at_exit)
{
	size_t kept = 0, stay = 0;
	struct mc_leak left[AHEAD];   /* asked, matched by none */
	for (size_t i = 0; i < *n; i++) {
		bool asked = (kinds >> (groups[i].kind & 3)) & 1;
		if (vd[i] >= 0 && asked && suppressed(res, &groups[i], vd[i], count))
			continue;
		if (asked && stay < AHEAD)
			left[stay++] = groups[i];
		groups[kept++] = groups[i];
	}
	*n = kept;
	if (stay)
		name_ahead(left, stay, at_exit, NULL);
}

/* The process's end, where every record asked has a verdict another
 * process kept and every entry they name has its name kept beside them
 * (suppcache.c): done without reading the set's file; false (nothing
 * changed): load the set.  Tried once a process. */
/* The sum of the cache's key, false if it has none.  A function of its
 * own: the key (5 KiB) is off the stack before the summary's notes are
 * stat'ed, the kept verdicts taken and their frames named, the exit's
 * deepest paths, where each 4 KiB deeper was a page fault. */
static __attribute__((noinline)) bool light_key(uint64_t *sum)
{
	if (!self[0])
		mc_suppress_init();
	char key[sizeof self + 4096 + 8];
	size_t keylen = 0;
	if (!cache_key(key, sizeof key, &keylen))
		return false;
	*sum = mc_fnv1a(key, keylen);
	return true;
}

/* The summary of the set the cache's key names, its entry count into
 * light_n. */
static bool light_open(void)
{
	uint64_t sum;
	return light_key(&sum) && mc_suppcache_light(sum, &light_n);
}

static bool light_region(struct memcheck_result *res, struct mc_leak *groups, size_t *n,
			 struct mc_supp_report *out, unsigned kinds)
{
	if (!light) {
		/* freed_by needs each entry's marks: the set's file */
		if (light_off || mc_opt.gen_suppressions || freed_by)
			return false;
		light_off = true;
		if (!light_open())
			return false;
		light = true;
	}
	size_t ns = light_n;
	if (!ns)
		return true;
	if (!out->count) {
		out->cmapped = ns * sizeof(struct mc_supp_used);
		out->count = mc_map(out->cmapped);
	}
	int32_t small[128], *vd = *n <= MC_ARRAY_SIZE(small) ? small : NULL;
	bool all = out->count && vd;
	mc_own_work_begin(false);
	all = all && kept_verdicts(groups, *n, kinds, vd);
	const char *f;
	int line;
	for (size_t i = 0; all && i < *n; i++)
		all = vd[i] < 0 || mc_suppcache_light_name((size_t)vd[i], &f, &line);
	if (all)
		take_kept(res, groups, n, kinds, vd, out->count, out->at_exit);
	mc_own_work_end();
	if (all) {
		list_used(out, ns);
		return true;
	}
	/* the set loaded as before: the count is the earlier calls' (the
	 * same set, its files unchanged since: mc_suppress_region makes a
	 * larger one if not), or none */
	if (out->count && !out->used) {
		mc_unmap(out->count, out->cmapped);
		out->count = NULL;
	}
	/* the set's load takes the summary's verdicts over where its
	 * file is the summary's (suppcache.c), else drops them */
	light = false;
	return false;
}

/* name_ahead for the records no kept verdict suppresses (vd: each
 * record's, or NULL).  A function of its own: the records asked (2 KiB)
 * were on mc_suppress_region's frame under all of its work. */
static __attribute__((noinline)) void name_asked(const struct mc_leak *groups, size_t n,
						 const int32_t *vd, bool at_exit, struct memo *memo)
{
	/* A record a kept verdict suppresses is neither matched nor
	 * printed: its frames are not named (a process whose stacks
	 * other processes matched but one, as a suite's processes of
	 * one program are, named them all). */
	struct mc_leak ask[AHEAD];
	size_t nask = 0;
	bool skip = false;
	for (size_t i = 0; vd && i < n && nask < AHEAD; i++) {
		if (vd[i] >= 0)
			skip = true;
		else
			ask[nask++] = groups[i];
	}
	name_ahead(skip ? ask : groups, skip ? nask : n, at_exit, memo);
}

void mc_suppress_region(struct memcheck_result *res, struct mc_leak *groups, size_t *n,
			struct mc_supp_report *out, unsigned kinds)
{
	kinds &= ~out->done;
	out->done |= kinds;
	freed_by = out->at_exit && mc_opt.valgrind_text != MC_VGTEXT_NONE ? freeres_unrun() : 0;
	if (unlikely(mc_fatal_sig))
		own_buffers();
	freed_errors = &out->freed_errors;
	/* Only the records of the kinds asked (region.c: those whose figures
	 * something reads) need matching, and the shipped files only when
	 * there is one; files the user named are read at the first
	 * region's end, so that a bad one fails every region. */
	bool need = false;
	for (size_t i = 0; groups && i < *n && !need; i++)
		need = (kinds >> (groups[i].kind & 3)) & 1;
	/* a set read at an earlier region's end, before the exit's freeres */
	if (loaded && supps && mc_opt.default_suppressions && loaded_off != freeres_off())
		mc_suppress_forget();
	if (!loaded && need && out->at_exit && light_region(res, groups, n, out, kinds))
		return;
	if (!loaded && (need || mc_opt.suppressions))
		load();
	if (bad[0])
		snprintf(out->violation, sizeof out->violation,
			 "suppression file not read: %s", bad);
	if (!need)
		return;
	size_t ns = mc_supp_count(supps);
	if (!ns && !mc_opt.gen_suppressions)
		return;
	if (out->count && out->cmapped < ns * sizeof(struct mc_supp_used)) {
		/* an earlier call's without the set, whose files changed
		 * since (light_region): its counts are another set's */
		mc_unmap(out->count, out->cmapped);
		out->count = NULL;
	}
	if (!out->count) {
		out->cmapped = (ns ? ns : 1) * sizeof(struct mc_supp_used);
		out->count = mc_map(out->cmapped);
	}
	struct mc_supp_used *count = out->count;
	if (!count) {
		mc_log("no memory to match suppressions: none applied");
		return;
	}
	/* The verdicts other processes kept: where every record asked has
	 * one, no frame is named, nothing matched, nothing mapped for it. */
	int32_t small[128], *vd = NULL;
	size_t vdmapped = 0;
	if (!mc_opt.gen_suppressions && ns)
		vd = *n <= MC_ARRAY_SIZE(small) ? small : mc_map(vdmapped = *n * sizeof *vd);
	mc_own_work_begin(false);
	bool all = vd && kept_verdicts(groups, *n, kinds, vd);
	if (all)
		take_kept(res, groups, n, kinds, vd, count, out->at_exit);
	mc_own_work_end();
	if (all) {
		if (vdmapped)
			mc_unmap(vd, vdmapped);
		list_used(out, ns);
		return;
	}
	/* Kept for a second call (the region's other kinds), with the
	 * memo's answers: mapped and populated once. */
	bool first = !out->frames;
	if (!out->memo && (out->memo = mc_map_lazy(MEMO_MAPPED))) {
		/* the names' slots and the memo's: probed before written */
		mc_write_first(out->memo, 1);
		mc_write_first((char *)out->memo + MC_SUPP_NAMES_BYTES,
			       offsetof(struct memo, slot) + sizeof(uint16_t) * MEMO_SLOTS);
	}
	char *names = out->memo;
	struct memo *memo = names ? (struct memo *)(names + MC_SUPP_NAMES_BYTES) : NULL;
	/* Touched as resolved, so mapped lazily (148 KiB); in it, first the
	 * deep flags and the quick frames every record's match writes from
	 * the start, then the full ones, which only some matches need.  The
	 * two pages of the flags and the first 8 quick frames are populated
	 * below: with the flags after all the frames, they were three page
	 * faults (15-35 us each here) at every exit that matched a record. */
	if (!out->frames)
		out->frames = mc_map_lazy(FRAMES_BYTES);
	char *frames = out->frames;
	_Static_assert(MC_MAX_DEPTH * sizeof(bool) % _Alignof(struct mc_frame_info) == 0,
		       "the quick frames after the flags stay aligned");
	bool *deep = (bool *)frames;
	struct mc_frame_info *quick = (struct mc_frame_info *)(deep + MC_MAX_DEPTH);
	if (!frames) {
		if (vdmapped)
			mc_unmap(vd, vdmapped);
		mc_log("no memory to match suppressions: none applied");
		return;
	}
	mc_own_work_begin(false);
	/* Every record's addresses named at the first call, whatever kinds
	 * it matches: a table is read once for all of them, and a region
	 * whose lost records stay (it fails) matches the rest next
	 * (region.c), their names then found. */
	if (first) {
		/* (in the exit's tail nothing is populated: written, not
		 * read first, each page is one fault, not two) */
		mc_populate(frames, (size_t)((char *)(quick + 8) - frames));
		mc_write_first(frames, (size_t)((char *)(quick + 8) - frames));
		name_asked(groups, *n, vd, out->at_exit, memo);
	}
	size_t kept = 0;
	uint32_t at = 0;   /* memo->dec's next, the records in their order */
	for (size_t i = 0; i < *n; i++) {
		struct mc_leak *l = &groups[i];
		if (!((kinds >> (l->kind & 3)) & 1)) {
			groups[kept++] = *l;
			continue;
		}
		if (vd && vd[i] != -2) {
			if (vd[i] < 0 || !suppressed(res, l, vd[i], count))
				groups[kept++] = *l;
			continue;
		}
		struct lazy z = { .f = quick + MC_MAX_DEPTH, .cap = MC_MAX_DEPTH * 2,
				  .q = quick, .deep = deep,
				  .memo = memo, .nmemo = &out->nmemo };
		uint32_t d = at;
		while (memo && d < memo->ndec && memo->dec[d].stack != l->stack)
			d++;
		if (memo && d < memo->ndec) {
			z.pcs = memo->dec[d].pcs;
			z.npcs = memo->dec[d].n;
			at = d + 1;
		} else {
			z.npcs = mc_stack_get_code(l->stack, &z.pcs);
		}
		struct mc_supp_stack st = { .frame = lazy_frame, .arg = &z };
		if (z.npcs <= MC_MAX_DEPTH && quick_covers(&z)) {
			st.quick = quick_frame;
			st.may_name = may_name;
			if (memo) {
				st.pcs = z.pcs;
				st.npcs = z.npcs;
				st.names = names;
			}
		}
		long m = match_kept((int)l->kind, &z, &st);
		/* gen() writes from the frames alone */
		st.quick = NULL;
		if (m < 0) {
			if (mc_opt.gen_suppressions)
				gen(res->name, l, &st);
			groups[kept++] = *l;
			continue;
		}
		if (!suppressed(res, l, m, count))
			groups[kept++] = *l;
	}
	mc_own_work_end();
	if (vdmapped)
		mc_unmap(vd, vdmapped);
	*n = kept;
	list_used(out, ns);
}

/* The scan's question (scan.c): of the stacks of the blocks it left
 * possibly reachable, which allocated a pool?  Matched as records are,
 * frames read only as far as matching needs them. */
bool mc_suppress_pools_any(void)
{
	if (!loaded)
		load();
	return mc_supp_pools(supps) > 0;
}

/* The stacks[0..n) that an entry matches for kind (MC_SUPP_POOL, or a
 * leak kind), kept at the front; with freeres, only those whose entry
 * has one of its marks.  Matched as records are, frames read only as
 * far as matching needs them, the verdicts kept for other processes. */
static size_t stacks_matching(uint32_t *stacks, size_t n, int kind, unsigned freeres)
{
	char *frames = mc_map_lazy(FRAMES_BYTES);
	if (!frames)
		return 0;
	bool *deep = (bool *)frames;
	struct mc_frame_info *quick = (struct mc_frame_info *)(deep + MC_MAX_DEPTH);
	size_t kept = 0;
	mc_own_work_begin(false);
	for (size_t i = 0; i < n; i++) {
		struct lazy z = { .f = quick + MC_MAX_DEPTH, .cap = MC_MAX_DEPTH * 2,
				  .q = quick, .deep = deep };
		z.npcs = mc_stack_get_code(stacks[i], &z.pcs);
		/* kept as the records' verdicts are: a warm process names
		 * no frame for the question */
		long m = mc_opt.gen_suppressions ? -2 : mc_suppcache_verdict(kind, z.pcs, z.npcs);
		if (m == -2) {
			struct mc_supp_stack st = { .frame = lazy_frame, .arg = &z };
			if (z.npcs <= MC_MAX_DEPTH && quick_covers(&z)) {
				st.quick = quick_frame;
				st.may_name = may_name;
			}
			m = match_kept(kind, &z, &st);
		}
		if (m >= 0 && (!freeres || (mc_supp_freeres(supps, (size_t)m) & freeres)))
			stacks[kept++] = stacks[i];
	}
	mc_own_work_end();
	mc_unmap(frames, FRAMES_BYTES);
	return kept;
}

size_t mc_suppress_pools(uint32_t *stacks, size_t n)
{
	if (!n || !mc_suppress_pools_any())
		return 0;
	return stacks_matching(stacks, n, MC_SUPP_POOL, 0);
}

/* The scan's other question, at the exit under valgrind's text where
 * memcheck cannot run the freeres functions valgrind runs (another
 * thread runs: freeres_unrun): of the stacks of the blocks it left
 * still reachable, which allocated what those functions free (the
 * entries marked "# freeres:")?  valgrind frees those blocks before its
 * scan: what they alone point to (a block whose only copy is in stdio's
 * buffer, a putenv string in the environment's array) is lost there,
 * and the scan is made again without reading them (scanpool.c).  0
 * elsewhere. */
size_t mc_suppress_freeres(uint32_t *stacks, size_t n)
{
	if (!n || mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return 0;
	if (!loaded)
		load();
	unsigned freeres = supps ? freeres_unrun() : 0;
	return freeres ? stacks_matching(stacks, n, MC_KIND_REACHABLE, freeres) : 0;
}

/* A child forked while another thread was reading the files or matching
 * (region.c): read them again when needed; the half-made tables stay
 * mapped, unused. */
void mc_suppress_forget(void)
{
	supps = NULL;
	loaded = false;
	light = light_off = false;
	bad[0] = 0;
	/* a verdict is an index into the set it was read with: a load
	 * that keeps no cache must not take the old set's */
	mc_suppcache_verdicts_forget();
}

void mc_suppress_report_free(struct mc_supp_report *out)
{
	/* the region's new verdicts, of all its calls: one write */
	mc_suppcache_verdicts_flush();
	if (out->at_exit)
		return;
	if (out->used)
		mc_unmap(out->used, out->mapped);
	if (out->count)
		mc_unmap(out->count, out->cmapped);
	if (out->frames)
		mc_unmap(out->frames, FRAMES_BYTES);
	if (out->memo)
		mc_unmap(out->memo, MEMO_MAPPED);
	out->frames = out->memo = NULL;
	out->nmemo = 0;
	out->used = out->count = NULL;
	out->nused = 0;
}
