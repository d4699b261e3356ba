/*
 * plain_own_bss.c - prints how many pages of libmemcheck's own .bss (the
 * anonymous mapping right after the library's last file mapping) are
 * present at the end of main, as mincore(2) sees them (a page a read
 * mapped, the zero page, counts as one a write did), then on a second
 * line each such page's offset from the library's first mapping, in hex.  Run preloaded and
 * left out by MEMCHECK_PROGRAMS, memcheck only forwards, and what its
 * start-up and forwarding touched of its .bss is what this prints
 * (tests/test_shortexit.c's left_out_bss_untouched).  Only system calls
 * before the count (an mmap and munmap of its own among them: the
 * wrappers'), no stdio, no malloc; with argv[1] "blocks", 300 blocks
 * allocated and freed first (test_shortexit's shard_lines_one_page: the
 * block table's lines a one-thread process writes).  Prints -1 where no
 * such mapping is found (not preloaded).  Not linked to memcheck.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char maps[1 << 16];
static unsigned char vec[4096];

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "blocks") == 0) {
		static void *v[300];
		for (size_t i = 0; i < sizeof v / sizeof *v; i++)
			if (!(v[i] = malloc(24)))
				return 2;
		for (size_t i = 0; i < sizeof v / sizeof *v; i++)
			free(v[i]);
	}
	/* a mapping of the program's own, made and removed: memcheck's
	 * mmap and munmap wrappers see both (a measured process would
	 * note it as a root of the scan) */
	void *own = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (own == MAP_FAILED || munmap(own, 4096) != 0)
		return 2;
	int fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		return 2;
	size_t n = 0;
	for (ssize_t r; n < sizeof maps - 1 && (r = read(fd, maps + n, sizeof maps - 1 - n)) > 0;)
		n += (size_t)r;
	close(fd);
	maps[n] = '\0';
	/* the last line naming libmemcheck, then the next line: its .bss
	 * when it starts where that one ends and names no file */
	uintptr_t lib_end = 0, lo = 0, hi = 0, base = 0;
	for (char *line = maps; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *end;
		uintptr_t a = strtoull(line, &end, 16);
		uintptr_t b = strtoull(end + 1, NULL, 16);
		if (strstr(line, "libmemcheck")) {
			if (!base || a < base)
				base = a;
			lib_end = b;
		} else if (lib_end && a == lib_end && !strchr(line, '/') && !strchr(line, '[')) {
			lo = a;
			hi = b;
			break;
		} else {
			lib_end = 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	long count = -1;
	if (lo && (hi - lo) / 4096 <= sizeof vec && mincore((void *)lo, hi - lo, vec) == 0) {
		count = 0;
		for (size_t i = 0; i < (hi - lo) / 4096; i++)
			count += vec[i] & 1;
	}
	printf("%ld\n", count);
	for (size_t i = 0; count > 0 && i < (hi - lo) / 4096; i++)
		if (vec[i] & 1)
			printf(" %lx", (unsigned long)(lo + i * 4096 - base));
	printf("\n");
	return 0;
}
