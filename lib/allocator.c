/*
 * allocator.c - which allocator memcheck forwards to.  The object that
 * serves malloc is known (interpose.c asks dladdr); what it is called is
 * told by symbols only that allocator exports.  Reports name it so that
 * figures from different allocators are not compared unknowingly.
 */
#include <dlfcn.h>
#include <string.h>

#include "internal.h"

/* Allocators recognised by a symbol only they export.  Each entry is the
 * place for what else memcheck learns to ask that allocator. */
static const struct allocator {
	const char *name;
	const char *markers[3];         /* NULL-terminated */
} allocators[] = {
	{ "mimalloc", { "mi_version", NULL } },
	{ "jemalloc", { "mallctl", NULL } },
	{ "tcmalloc", { "tc_version", "MallocExtension_GetNumericProperty", NULL } },
};

static char name_buf[256];
static const char *name = "unknown";

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

void mc_allocator_detect(void)
{
	const char *object = mc_real.object;

	if (object && *object && is_glibc(object)) {
		name = "glibc";
		return;
	}
	/* dlopen and dlsym may allocate; that is memcheck's, not the
	 * program's. */
	mc_guard_enter();
	/* Searching that object alone: a program may load several allocators
	 * (a plugin linking jemalloc) while another serves malloc.  An empty
	 * path is the main program, which has no handle of its own. */
	void *h = object && *object ? dlopen(object, RTLD_NOLOAD | RTLD_LAZY) : NULL;
	const struct allocator *a = find_markers(h ? h : RTLD_DEFAULT);
	if (h)
		dlclose(h);     /* NOLOAD took a reference */
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
