/*
 * allocator.c - which allocator memcheck forwards to, what it says about
 * the memory it holds, and its call to give free memory back.
 *
 * The object that serves malloc is known (interpose.c asks dladdr); what
 * it is called is told by symbols only that allocator exports.  Reports
 * name it so that figures from different allocators are not compared
 * unknowingly.
 *
 * Statistics and release calls are looked up with dlsym in that object
 * alone, once, when the allocator is detected: memcheck never links to an
 * allocator, an allocator loaded from any path works, and a program that
 * loads a second allocator (a plugin linking jemalloc) does not get that
 * one's figures.  A figure an allocator cannot give (an old glibc without
 * mallinfo2, a jemalloc built without statistics) is MEMCHECK_UNKNOWN,
 * never 0: 0 would read as "retains nothing".
 *
 * Everything here is called with memcheck's recursion guard held (region
 * ends in region.c, detection in mc_resolve): the allocators' own
 * statistics calls may allocate (jemalloc's first mallctl builds its
 * control tree), and those blocks are not the program's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define NSYMS 4

/* One allocator: how it is recognised, the functions memcheck asks it
 * (resolved into syms[] in that order), and how their answers become
 * struct mc_alloc_stats. */
struct allocator {
	const char *name;
	const char *markers[3];         /* NULL-terminated; none: by path */
	const char *calls[NSYMS];       /* NULL-terminated */
	void (*stats)(void *const *syms, struct mc_alloc_stats *out);
	bool (*release)(void *const *syms);
};

/* ---- glibc ----------------------------------------------------------- */

/* struct mallinfo2 (glibc >= 2.33), spelt out so that memcheck builds
 * against an older <malloc.h> and simply finds no mallinfo2 there. */
struct glibc_mallinfo2 {
	size_t arena;     /* non-mmapped bytes from the system, all arenas */
	size_t ordblks;
	size_t smblks;
	size_t hblks;
	size_t hblkhd;    /* bytes in mmapped chunks */
	size_t usmblks;
	size_t fsmblks;
	size_t uordblks;  /* bytes in chunks in use (non-mmapped) */
	size_t fordblks;  /* free bytes the arenas keep, top chunk included */
	size_t keepcost;
};

/* What malloc_trim gave back that mallinfo2 cannot see.  malloc_trim
 * cuts the top of the main heap (mallinfo2 sees that: arena shrinks) and
 * madvises MADV_DONTNEED the whole pages inside every free chunk (it does
 * not: those chunks still count in arena and fordblks).  With a live
 * block at the top of the heap -- a stdio buffer will do -- nothing is
 * cut, the resident size falls by 100 MB and mallinfo2 does not move.
 * So glibc_release measures the resident size around the trim, and the
 * part of the drop that mallinfo2 does not show is taken off held for as
 * long as the heap is exactly as the trim left it (every mallinfo2 field
 * equal): the next allocation from the arena, which may touch those pages
 * again, changes some field and ends the correction.  (Allocating and
 * freeing the same chunk in between would not; a program that does that
 * has made at most that chunk resident again.) */
/* (Region ends, which call both, hold region.c's region lock, which
 * fork waits for: a child never starts with trim_lock held.) */
static pthread_mutex_t trim_lock = PTHREAD_MUTEX_INITIALIZER;
static struct glibc_mallinfo2 trim_after;
static uint64_t trim_unseen;             /* 0: no correction */

static void glibc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	struct glibc_mallinfo2 (*mallinfo2)(void) = (struct glibc_mallinfo2 (*)(void))syms[0];
	if (!mallinfo2)
		return;
	/* mallinfo2 walks every arena's bins under its lock (a cost that
	 * grows with free chunks) and allocates nothing.  Chunk sizes:
	 * headers count as allocated. */
	struct glibc_mallinfo2 mi = mallinfo2();
	out->allocated = (uint64_t)mi.uordblks + mi.hblkhd;
	/* held - allocated is then fordblks: free chunks, fastbins and the
	 * top chunks of all arenas.  Chunks in the threads' tcaches count as
	 * allocated, as glibc counts them. */
	out->held = (uint64_t)mi.arena + mi.hblkhd;
	pthread_mutex_lock(&trim_lock);
	if (trim_unseen && memcmp(&mi, &trim_after, sizeof mi) == 0)
		out->held -= trim_unseen;
	else
		trim_unseen = 0;
	pthread_mutex_unlock(&trim_lock);
}

static bool glibc_release(void *const *syms)
{
	struct glibc_mallinfo2 (*mallinfo2)(void) = (struct glibc_mallinfo2 (*)(void))syms[0];
	int (*malloc_trim)(size_t) = (int (*)(size_t))syms[1];
	if (!malloc_trim)
		return false;
	if (!mallinfo2) {
		malloc_trim(0);
		return true;
	}
	pthread_mutex_lock(&trim_lock);
	struct glibc_mallinfo2 before = mallinfo2();
	uint64_t rss_before = mc_rss_current();
	malloc_trim(0);
	uint64_t rss_after = mc_rss_current();
	struct glibc_mallinfo2 after = mallinfo2();
	uint64_t gone = rss_before > rss_after ? rss_before - rss_after : 0;
	uint64_t held_before = (uint64_t)before.arena + before.hblkhd;
	uint64_t held_after = (uint64_t)after.arena + after.hblkhd;
	uint64_t seen = held_before > held_after ? held_before - held_after : 0;
	/* Other threads may change the resident size meanwhile; the
	 * correction never exceeds the free bytes glibc counts. */
	uint64_t unseen = gone > seen ? gone - seen : 0;
	trim_unseen = unseen < after.fordblks ? unseen : after.fordblks;
	trim_after = after;
	pthread_mutex_unlock(&trim_lock);
	return true;
}

/* ---- mimalloc -------------------------------------------------------- */

/* The parts of mimalloc.h (2.x) used here. */
typedef struct mi_heap_area_s {
	void *blocks;
	size_t reserved;
	size_t committed;
	size_t used;             /* blocks in use in this area */
	size_t block_size;       /* usable size of each */
	size_t full_block_size;
} mi_heap_area_t;
typedef bool mi_block_visit_fun(const void *heap, const mi_heap_area_t *area, void *block,
				size_t block_size, void *arg);

static bool mi_count_area(const void *heap, const mi_heap_area_t *area, void *block,
			  size_t block_size, void *arg)
{
	(void)heap;
	(void)block_size;
	if (!block) /* called once per area first, then per block if asked */
		*(uint64_t *)arg += (uint64_t)area->used * area->block_size;
	return true;
}

/* Threads of the process now, from /proc/self/stat (field 20); 0 when
 * unreadable.  System calls and a stack buffer only. */
static long threads_now(void)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* The command name (field 2) may hold spaces and parentheses: count
	 * fields from the last ')'. */
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (int field = 2; field < 20 && *p; p++)
		if (*p == ' ')
			field++;
	long v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v;
}

static void mimalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	void (*process_info)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
			     size_t *, size_t *) =
		(void (*)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
			  size_t *))syms[0];
	void *(*heap_get_default)(void) = (void *(*)(void))syms[1];
	bool (*heap_visit)(const void *, bool, mi_block_visit_fun *, void *) =
		(bool (*)(const void *, bool, mi_block_visit_fun *, void *))syms[2];

	/* held: the bytes mimalloc has committed, its own count, kept in its
	 * process-wide statistics even in release builds (on Linux
	 * mi_process_info's current_rss is that same figure, not the
	 * process's).  Committed is not resident: mimalloc 2.0.9 commits a
	 * 32 MiB segment up front, so a program that has allocated nothing
	 * shows 32 MiB held with 2 MiB resident.  Once touched it stays
	 * resident: mi_collect(true) brings held and RSS both back to about
	 * 32 MiB. */
	if (process_info) {
		size_t commit = 0;
		process_info(NULL, NULL, NULL, NULL, NULL, &commit, NULL, NULL);
		out->held = commit;
	}

	/* allocated: mimalloc 2.0.9 keeps no total of bytes in use (its
	 * malloc statistics exist only in builds with MI_STAT > 1, and
	 * mi_stats_print only prints).  What it does expose is each heap's
	 * pages: blocks in use times block size, per page, no walk over
	 * blocks -- but only for the calling thread's heap.  With one thread
	 * in the process that heap holds every block, so the figure is
	 * mimalloc's own count.  With more, other threads' heaps would be
	 * missed and retained overstated: unknown instead.  A thread that
	 * ended with blocks still live left its pages abandoned, outside any
	 * heap until another thread reclaims them; those are missed too. */
	if (heap_get_default && heap_visit && threads_now() == 1) {
		uint64_t used = 0;
		if (heap_visit(heap_get_default(), false, mi_count_area, &used))
			out->allocated = used;
	}
}

static bool mimalloc_release(void *const *syms)
{
	void (*collect)(bool) = (void (*)(bool))syms[3];
	if (!collect)
		return false;
	collect(true);
	return true;
}

/* ---- jemalloc -------------------------------------------------------- */

typedef int mallctl_fn(const char *, void *, size_t *, void *, size_t);

static uint64_t je_size(mallctl_fn *mallctl, const char *name)
{
	size_t v, len = sizeof v;
	if (mallctl(name, &v, &len, NULL, 0) != 0 || len != sizeof v)
		return MEMCHECK_UNKNOWN;
	return v;
}

static void jemalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	mallctl_fn *mallctl = (mallctl_fn *)syms[0];
	if (!mallctl)
		return;
	/* Statistics are a snapshot taken at each "epoch" write. */
	uint64_t epoch = 1;
	size_t len = sizeof epoch;
	if (mallctl("epoch", &epoch, &len, &epoch, sizeof epoch) != 0)
		return; /* built without statistics */
	uint64_t allocated = je_size(mallctl, "stats.allocated");
	/* stats.allocated counts the small blocks the threads' caches keep
	 * for reuse: jemalloc's, not the program's.  4096 is
	 * MALLCTL_ARENAS_ALL, the sum over all arenas. */
	uint64_t cached = je_size(mallctl, "stats.arenas.4096.tcache_bytes");
	if (allocated != MEMCHECK_UNKNOWN && cached != MEMCHECK_UNKNOWN && cached <= allocated)
		allocated -= cached;
	out->allocated = allocated;
	/* Resident: pages backing active blocks, metadata and dirty pages
	 * not yet purged (stats.active would leave out the dirty pages,
	 * which are exactly what jemalloc retains). */
	out->held = je_size(mallctl, "stats.resident");
}

static bool jemalloc_release(void *const *syms)
{
	mallctl_fn *mallctl = (mallctl_fn *)syms[0];
	if (!mallctl)
		return false;
	/* The calling thread's cache first, so its blocks reach the arenas
	 * and can be purged with them; then purge every arena's dirty and
	 * muzzy pages (arena.<MALLCTL_ARENAS_ALL>.purge). */
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
	return mallctl("arena.4096.purge", NULL, NULL, NULL, 0) == 0;
}

/* ---- tcmalloc (gperftools) ------------------------------------------- */

typedef int tc_property_fn(const char *, size_t *);

static uint64_t tc_size(tc_property_fn *get, const char *name)
{
	size_t v = 0;
	return get(name, &v) ? v : MEMCHECK_UNKNOWN;
}

static void tcmalloc_stats(void *const *syms, struct mc_alloc_stats *out)
{
	tc_property_fn *get = (tc_property_fn *)syms[0];
	if (!get)
		return;
	/* current_allocated_bytes already leaves out what the thread,
	 * transfer and central caches keep. */
	out->allocated = tc_size(get, "generic.current_allocated_bytes");
	/* heap_size counts pages tcmalloc has given back (unmapped, i.e.
	 * MADV_DONTNEED) too: those are not held. */
	uint64_t heap = tc_size(get, "generic.heap_size");
	uint64_t unmapped = tc_size(get, "tcmalloc.pageheap_unmapped_bytes");
	if (heap != MEMCHECK_UNKNOWN && unmapped != MEMCHECK_UNKNOWN && unmapped <= heap)
		out->held = heap - unmapped;
}

static bool tcmalloc_release(void *const *syms)
{
	void (*release)(void) = (void (*)(void))syms[1];
	void (*thread_idle)(void) = (void (*)(void))syms[2];
	if (!release)
		return false;
	/* ReleaseFreeMemory gives back the page heap's free spans only:
	 * blocks in the thread caches stay, and so do the spans they keep
	 * from being whole.  Emptying the calling thread's cache first
	 * (rebuilt at its next malloc) took what remains after 100 MiB of
	 * small blocks freed from 31 to 19 MiB. */
	if (thread_idle)
		thread_idle();
	release();
	return true;
}

/* ---- the table ------------------------------------------------------- */

/* glibc is recognised by the path of its object; the others, wherever
 * they were loaded from, by a symbol only they export. */
static const struct allocator glibc = {
	"glibc", { NULL }, { "mallinfo2", "malloc_trim", NULL },
	glibc_stats, glibc_release,
};
static const struct allocator allocators[] = {
	{ "mimalloc", { "mi_version", NULL },
	  { "mi_process_info", "mi_heap_get_default", "mi_heap_visit_blocks", "mi_collect" },
	  mimalloc_stats, mimalloc_release },
	{ "jemalloc", { "mallctl", NULL }, { "mallctl", NULL },
	  jemalloc_stats, jemalloc_release },
	{ "tcmalloc", { "tc_version", "MallocExtension_GetNumericProperty", NULL },
	  { "MallocExtension_GetNumericProperty", "MallocExtension_ReleaseFreeMemory",
	    "MallocExtension_MarkThreadIdle", NULL },
	  tcmalloc_stats, tcmalloc_release },
};

static char name_buf[256];
static const char *name = "unknown";
static const struct allocator *live;     /* NULL: one memcheck cannot ask */
static void *syms[NSYMS];                /* live->calls, resolved */
static const void *glibc_base;           /* the C library's, when it serves malloc */

static bool is_glibc(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* libc.so.6 as linked; libc-2.x.so is the file older glibc installs. */
	return strncmp(base, "libc.so", 7) == 0 ||
	       (strncmp(base, "libc-", 5) == 0 && strstr(base, ".so"));
}

static const struct allocator *find_markers(void *handle)
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(allocators); i++) {
		const struct allocator *a = &allocators[i];
		for (size_t j = 0; j < MC_ARRAY_SIZE(a->markers) && a->markers[j]; j++) {
			if (dlsym(handle, a->markers[j]))
				return a;
		}
	}
	return NULL;
}

/* name as handle finds it, but only if it lives in the object at base
 * (the one that serves malloc): with RTLD_DEFAULT, or a handle whose
 * dependencies define the name too, it could be another allocator's. */
static void *lookup(void *handle, const char *sym, const void *base)
{
	void *f = dlsym(handle, sym);
	if (!f || mc_object_base(f, NULL) != base)
		return NULL;
	return f;
}

void mc_allocator_detect(void)
{
	const char *object = mc_real.object;

	/* dlopen and dlsym may allocate; that is memcheck's, not the
	 * program's. */
	mc_guard_enter();
	/* Searching that object alone: a program may load several allocators
	 * while another serves malloc.  An empty path is the main program,
	 * which has no handle of its own. */
	void *h = object && *object ? dlopen(object, RTLD_NOLOAD | RTLD_LAZY) : NULL;
	void *handle = h ? h : RTLD_DEFAULT;
	const struct allocator *a;
	if (object && *object && is_glibc(object))
		a = &glibc;
	else
		a = find_markers(handle);

	const void *base = mc_real.malloc ? mc_object_base((void *)mc_real.malloc, NULL) : NULL;
	memset(syms, 0, sizeof syms);
	for (size_t i = 0; a && base && i < NSYMS && a->calls[i]; i++)
		syms[i] = lookup(handle, a->calls[i], base);
	live = a;
	glibc_base = a == &glibc ? base : NULL;
	if (h)
		dlclose(h);     /* NOLOAD took a reference; the object stays */
	mc_guard_leave();

	if (a) {
		name = a->name;
	} else if (object && *object) {
		size_t n = strlen(object);
		if (n >= sizeof name_buf)
			n = sizeof name_buf - 1;
		memcpy(name_buf, object, n);
		name_buf[n] = 0;
		name = name_buf;
	} else {
		name = "unknown";
	}
}

const char *mc_allocator_name(void)
{
	return name;
}

const void *mc_allocator_glibc_base(void)
{
	return glibc_base;
}

bool mc_allocator_stats(struct mc_alloc_stats *out)
{
	out->allocated = out->held = out->retained = MEMCHECK_UNKNOWN;
	if (!live)
		return false;
	int saved = errno;
	live->stats(syms, out);
	if (out->allocated != MEMCHECK_UNKNOWN && out->held != MEMCHECK_UNKNOWN)
		/* Caches counted as allocated by one figure and not held by
		 * the other (never seen, but the two are read apart) must
		 * not wrap around. */
		out->retained = out->held > out->allocated ? out->held - out->allocated : 0;
	errno = saved;
	return out->allocated != MEMCHECK_UNKNOWN || out->held != MEMCHECK_UNKNOWN;
}

bool mc_allocator_release(void)
{
	if (!live)
		return false;
	int saved = errno;
	bool ok = live->release(syms);
	errno = saved;
	return ok;
}
