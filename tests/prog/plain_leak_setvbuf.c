/* Buffers the program gives stdio (setvbuf): glibc's exit, after every
 * exit handler, flushes each stream that was used and makes it
 * unbuffered (_IO_cleanup), its buffer pointers then the stream's own
 * one-byte buffer; a buffer it allocated itself stays noted for
 * __libc_freeres, one the program gave is no longer pointed to by the
 * stream.  valgrind's leak check comes after: stdout's buffer (1,024 B)
 * and a written stream's (512 B), whose pointers the program dropped,
 * are definitely lost; a used stream's buffer the program still points
 * to (256 B) and an unused stream's (128 B, untouched by the clean-up)
 * still reachable, with the three streams (472 B each).  memcheck,
 * scanning before that clean-up, found all seven still reachable
 * (roots.c, stdio_user_buffers).
 *
 * With "backup": a stream reading ungetc's backup area (a block glibc
 * frees at that clean-up) with a buffer of the program's, dropped: the
 * stream is read whole, both blocks still reachable, none lost (cut,
 * the backup area was lost where valgrind sees it freed).
 *
 * usage: plain_leak_setvbuf [backup]   writes "out" to stdout, exits 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *kept;

static FILE *with_buffer(size_t size, char **buf)
{
	FILE *f = fopen("/dev/null", "w");
	if (!f)
		exit(2);
	*buf = malloc(size);
	if (!*buf || setvbuf(f, *buf, _IOFBF, size))
		exit(3);
	return f;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "backup")) {
		FILE *f = fopen("/proc/self/cmdline", "r");
		char *b = malloc(96);
		if (!f || !b || setvbuf(f, b, _IOFBF, 96) || fgetc(f) == EOF)
			return 5;
		/* other characters than those read: the backup area */
		if (ungetc('Z', f) == EOF || ungetc('Y', f) == EOF)
			return 6;
		exit(0);
	}
	char *buf = malloc(1024);
	if (!buf || setvbuf(stdout, buf, _IOFBF, 1024))
		return 4;
	fputs("out\n", stdout);
	fputs("lost", with_buffer(512, &buf));
	fputs("kept", with_buffer(256, &kept));
	with_buffer(128, &buf); /* never used */
	buf = NULL;
	exit(0);
}
