/*
 * plain_rlimit_view.c - what a program reads back of the address-space
 * limits it sets, and the errors its calls get: the same under memcheck
 * (which leaves its own mappings out of the kernel's limit, lib/rlimits.c)
 * as without it.  Preloaded only, never linked to memcheck.
 *
 * usage: plain_rlimit_view AS|DATA
 * Prints one line a step: what the call returned (0, or the errno's
 * name) and the limits read back with getrlimit, getrlimit64 and prlimit
 * (in MiB, "inf" for none).  Exit 0, or 1 on a setup error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "drop_cap.h"

static int resource;

static void mib(char *out, size_t n, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(out, n, "inf");
	else
		snprintf(out, n, "%lu", (unsigned long)(v >> 20));
}

static void show(const char *step, int rc)
{
	struct rlimit a = { 0, 0 }, c = { 0, 0 };
	struct rlimit64 b = { 0, 0 };
	int ra = getrlimit(resource, &a);
	int rb = getrlimit64(resource, &b);
	int rcc = prlimit(0, resource, NULL, &c);
	char s[4][24];
	mib(s[0], sizeof s[0], a.rlim_cur);
	mib(s[1], sizeof s[1], a.rlim_max);
	mib(s[2], sizeof s[2], b.rlim_cur);
	mib(s[3], sizeof s[3], c.rlim_max);
	printf("%s: %s; getrlimit %d %s/%s, getrlimit64 %d %s, prlimit %d max %s\n", step,
	       rc == 0 ? "0" : strerrorname_np(errno), ra, s[0], s[1], rb, s[2], rcc, s[3]);
}

static int set(rlim_t cur, rlim_t max)
{
	struct rlimit rl = { cur, max };
	return setrlimit(resource, &rl);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 1;
	resource = strcmp(argv[1], "DATA") == 0 ? RLIMIT_DATA : RLIMIT_AS;
	rlim_t g = 1UL << 30;
	show("start", 0);
	show("soft 4g", set(4 * g, RLIM_INFINITY));
	show("soft 1g hard 2g", set(g, 2 * g));
	show("soft above hard", set(3 * g, 2 * g));
	struct rlimit64 r64 = { g / 2, 2 * g };
	show("setrlimit64 512m", setrlimit64(resource, &r64));
	struct rlimit old = { 0, 0 }, want = { g, 2 * g };
	int rc = prlimit(0, resource, &want, &old);
	char o[2][24];
	mib(o[0], sizeof o[0], old.rlim_cur);
	mib(o[1], sizeof o[1], old.rlim_max);
	printf("prlimit's old: %s/%s\n", o[0], o[1]);
	show("prlimit 1g", rc);
	show("hard 1g", set(g, g));
	drop_resource_cap();
	show("hard raised without the capability", set(g, 2 * g));
	show("soft lowered", set(g / 4, g));
	show("none", set(RLIM_INFINITY, g));
	show("hard lowered", set(g / 8, g / 8));
	return 0;
}
