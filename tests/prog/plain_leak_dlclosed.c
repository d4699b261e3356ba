/* A block allocated by a library the program then closes with dlclose:
 * its allocation's frame in the library is code no longer loaded, which
 * valgrind names "???" with no object.  The kernel hands the freed range
 * to the next mapping, and at the exit that was memcheck's own read-only
 * map of the program's file (elfmod.c, to read its symbols): memcheck
 * named the frame after that file ("??? (in .../plain_leak_dlclosed)",
 * or one of its functions).  The library is libleak_dlclosed.so beside
 * the program, or argv[1]. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "plain_leak_common.h"

char *volatile lost;

int main(int argc, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	snprintf(lib, sizeof lib, "%.*s/libleak_dlclosed.so", (int)(slash - self), self);
	void *h = dlopen(argc > 1 ? argv[1] : lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*make)(size_t) = (void *(*)(size_t))dlsym(h, "leak_dlclosed_make");
	if (!make)
		return 1;
	lost = make(96);
	lost = NULL;
	dlclose(h);
	scrub();
	return 0;
}
