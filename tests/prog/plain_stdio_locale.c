/* What the C library keeps to the end: stdio's buffers (stdout's, a
 * file's), the locale's data (setlocale), localtime's time zone.
 * valgrind frees them at exit with __libc_freeres and says "All heap
 * blocks were freed" (tests/test_wrapper.c).  With "abort" the process
 * dies of SIGABRT at the end, where valgrind runs no freeres and lists
 * all of them still reachable (tests/test_valgrind.c). */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "");
	printf("hello %d\n", 42);
	FILE *f = fopen("/proc/self/stat", "r");
	char buf[64];
	if (f && fgets(buf, sizeof buf, f))
		puts("read");
	if (f)
		fclose(f);
	time_t t = 0;
	char s[64];
	strftime(s, sizeof s, "%Y", localtime(&t));
	puts(s);
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	return 0;
}
