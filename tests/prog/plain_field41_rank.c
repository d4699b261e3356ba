/*
 * plain_field41_rank.c - one of several processes of one program that a
 * parallel suite (ctest -j, make -j) ends at the same moment: it touches
 * argv[1] MiB, then appends a byte to the file argv[2] and waits
 * until that file holds argv[3] bytes (every process started and
 * allocated), then frees it and returns.  tests/test_field.c runs it
 * once per size under glibc for a baseline, then argv[3] copies at once
 * under another allocator with a relative limit: each process's region
 * end, all of them together, is to take a rank of its own.  argv[1] "-":
 * the MiB read from standard input, which it then closes (field43: the
 * same arguments on different inputs, `prog - ready n < input`); argv[1]
 * a path (from '/'): the MiB read from that file (field44: one file name
 * rewritten for each run, as xz's test_compress.sh's tmp_comp_<input>).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	char in[32] = "";
	/* and closes it, as zlib-ng's minigzip does before its exit */
	if (!strcmp(argv[1], "-") && (read(0, in, sizeof in - 1) <= 0 || close(0) != 0))
		return 2;
	if (argv[1][0] == '/') {
		int in_fd = open(argv[1], O_RDONLY);
		if (in_fd < 0 || read(in_fd, in, sizeof in - 1) <= 0)
			return 2;
		close(in_fd);
	}
	size_t mib = strtoul(strcmp(argv[1], "-") && argv[1][0] != '/' ? argv[1] : in, NULL, 10);
	long all = strtol(argv[3], NULL, 10);
	char *p = malloc(mib << 20);
	if (!p)
		return 1;
	memset(p, 1, mib << 20);
	int fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 1;
	close(fd);
	struct timespec tick = { 0, 1000000 };
	struct stat st;
	/* at most 60 s: a copy that never started must not hang the rest */
	for (int waited = 0; waited < 60000; waited++) {
		if (stat(argv[2], &st) == 0 && st.st_size >= all)
			break;
		nanosleep(&tick, NULL);
	}
	int ret = p[(mib << 20) - 1] != 1;
	free(p);
	return ret;
}
