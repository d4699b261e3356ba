/* plain_dlopen_lib - libmemcheck.so loaded with dlopen, not preloaded
 * (tests/test_stacks.c).  Its thread-local variables are initial-exec:
 * the C library places them in the static TLS block's surplus, which is
 * small (~1.6 KiB with glibc's defaults), and a PT_TLS segment larger
 * than what is left fails the load ("cannot allocate memory in static
 * TLS block").  Prints "loaded" where the library loads and its PT_TLS
 * is at most TLS_MAX bytes, else what went wrong; exit status 0 or 1.
 * The library is build/libmemcheck.so, found from this program's own
 * path (build/tests/prog/), or argv[1]. */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Where memcheck's PT_TLS stood before its kept walks (0x430 bytes),
 * with room to grow: well under glibc's surplus. */
#define TLS_MAX 1280

static size_t tls_size = (size_t)-1;

static int find_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!strstr(info->dlpi_name, "libmemcheck.so"))
		return 0;
	tls_size = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			tls_size = info->dlpi_phdr[i].p_memsz;
	return 1;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	if (argc > 1)
		snprintf(path, sizeof path, "%s", argv[1]);
	else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
		if (n <= 0)
			return perror("readlink"), 1;
		path[n] = '\0';
		char *slash = strrchr(path, '/');
		strcpy(slash ? slash + 1 : path, "../../libmemcheck.so");
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("not loaded: %s\n", dlerror());
		return 1;
	}
	dl_iterate_phdr(find_tls, NULL);
	if (tls_size == (size_t)-1) {
		printf("loaded, but not among the loaded objects\n");
		return 1;
	}
	if (tls_size > TLS_MAX) {
		printf("loaded, PT_TLS %zu bytes: over %d\n", tls_size, TLS_MAX);
		return 1;
	}
	printf("loaded\n");
	return 0;
}
