/* Streams left open at exit whose memory glibc's exit-time stdio
 * clean-up frees (_IO_cleanup's _IO_unbuffer_all, glibc 2.36 as Debian
 * ships it): ungetc's backup area (128 B) of every stream that has
 * one, a wide stream's backup area, and a wide-oriented stream's wide
 * buffer.  valgrind's leak check comes after that clean-up: it counts
 * those blocks freed (one free more each in "total heap usage") and
 * lists none of them; the standard streams' and fopen's byte buffers
 * stay allocated (noted for __libc_freeres), still reachable.
 *
 * usage: plain_stdio_exit MODE   (exits 0; stdout gets "out" or a line)
 *   ungetc-stdin   ungetc of another character than the one read, on
 *                  stdin (made to read the program itself: freopen)
 *   ungetc-file    the same on a file it opened (the program itself: /proc would get another buffer size under valgrind)
 *   ungetc-fresh   ungetc on a stream never read (the area alone)
 *   fwprintf       fwprintf to stdout: its wide buffer
 *   fwprintf-file  fwprintf to a file it opened (/dev/null)
 *   ungetwc        a wide read stream pushed back: its wide backup area
 *   fwide          fwide(f, 1) on a stream never written: no buffer yet
 *   memstream      open_memstream written, never closed
 *   closed         the first three on streams it closed: nothing left
 *   user-buffers   stdin given a buffer (setvbuf) then read in the backup
 *                  area, and a wide stream given a byte buffer, both
 *                  buffers dropped: definitely lost, as valgrind says
 *                  (the clean-up leaves the streams pointing to neither)
 *   thread-alive   ungetc-file with another thread blocked at the exit
 *                  (a thread reading a stream frees its backup area when
 *                  it leaves it: memcheck counts nothing freed then, the
 *                  area still reachable) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static FILE *open_or_die(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);
	if (!f)
		exit(2);
	return f;
}

static void pushed_back(FILE *f)
{
	if (fgetc(f) == EOF || ungetc('Z', f) == EOF || ungetc('Y', f) == EOF)
		exit(3);
}

static const char *self;
static char *mem;

static size_t mem_size;
static int never[2];

/* Blocked on a pipe nobody writes, until the exit. */
static void *blocked(void *arg)
{
	(void)arg;
	char c;
	for (;;)
		if (read(never[0], &c, 1) <= 0)
			pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	self = argv[0];
	if (!strcmp(m, "ungetc-stdin")) {
		if (!freopen(self, "r", stdin))
			return 2;
		pushed_back(stdin);
	} else if (!strcmp(m, "ungetc-file")) {
		pushed_back(open_or_die(self, "r"));
	} else if (!strcmp(m, "ungetc-fresh")) {
		if (ungetc('Z', open_or_die(self, "r")) == EOF)
			return 3;
	} else if (!strcmp(m, "fwprintf")) {
		if (fwprintf(stdout, L"out %d\n", 1) < 0)
			return 4;
	} else if (!strcmp(m, "fwprintf-file")) {
		if (fwprintf(open_or_die("/dev/null", "w"), L"out %d\n", 1) < 0)
			return 4;
	} else if (!strcmp(m, "ungetwc")) {
		FILE *f = open_or_die(self, "r");
		/* one: a second compares the area's unwritten wchar_t
		 * (glibc's _IO_sputbackwc, an error of valgrind's) */
		if (fgetwc(f) == WEOF || ungetwc(L'Z', f) == WEOF)
			return 5;
	} else if (!strcmp(m, "fwide")) {
		if (fwide(open_or_die("/dev/null", "w"), 1) <= 0)
			return 6;
	} else if (!strcmp(m, "memstream")) {
		FILE *f = open_memstream(&mem, &mem_size);
		if (!f || fputs("kept", f) == EOF)
			return 7;
	} else if (!strcmp(m, "closed")) {
		FILE *f = open_or_die(self, "r");
		pushed_back(f);
		fclose(f);
		f = open_or_die("/dev/null", "w");
		fwprintf(f, L"out\n");
		fclose(f);
	} else if (!strcmp(m, "user-buffers")) {
		char *b = malloc(64);
		if (!b || !freopen(self, "r", stdin) || setvbuf(stdin, b, _IOFBF, 64))
			return 8;
		pushed_back(stdin);
		FILE *f = open_or_die("/dev/null", "w");
		b = malloc(200);
		if (!b || setvbuf(f, b, _IOFBF, 200) || fwprintf(f, L"out %d\n", 1) < 0)
			return 8;
		b = NULL;
	} else if (!strcmp(m, "thread-alive")) {
		pthread_t t;
		if (pipe(never) || pthread_create(&t, NULL, blocked, NULL))
			return 9;
		pushed_back(open_or_die(self, "r"));
	} else {
		return 1;
	}
	fputs(fwide(stdout, 0) > 0 ? "" : "out\n", stdout);
	exit(0);
}
