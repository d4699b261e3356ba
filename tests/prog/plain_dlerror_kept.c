/*
 * plain_dlerror_kept - a failed dlopen whose error the C library keeps
 * for dlerror: in libc's thread-local __libc_dlerror_result, a record
 * and its message, both from malloc, held until the thread's next call
 * into the dynamic linker.  Nothing is lost: valgrind
 * (--run-libc-freeres=no) calls both blocks still reachable at exit.
 *
 * usage: plain_dlerror_kept [read]   read: dlerror() is called (the
 * message rewritten with asprintf, marked returned); else the error is
 * left pending.  Prints "kept", exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (dlopen("/nonexistent/plain_dlerror_kept.so", RTLD_LAZY))
		return 1;
	if (argc > 1 && strcmp(argv[1], "read") == 0 && !dlerror())
		return 2;
	puts("kept");
	return 0;
}
