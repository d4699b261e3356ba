/* With libpatch_libc.so preloaded (tests/prog/shim/patch_libc.c): the
 * page of the C library's code that its constructor wrote is still the
 * process's own copy at main (pagemap: present, not the file's page,
 * bit 61 clear), as bare: "kept".  "lost" where something put the
 * file's page back in its place (MADV_DONTNEED on it: the write gone),
 * exit 1; "no patch" where the shim wrote nothing, exit 2. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	const uintptr_t *page = dlsym(RTLD_DEFAULT, "patch_libc_page");
	if (!page || !*page) {
		puts("no patch");
		return 2;
	}
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &e, sizeof e, (off_t)(*page / 4096 * sizeof e)) != sizeof e) {
		puts("no pagemap");
		return 2;
	}
	close(fd);
	int kept = (e >> 63 & 1) && !(e >> 61 & 1);
	puts(kept ? "kept" : "lost");
	return kept ? 0 : 1;
}
