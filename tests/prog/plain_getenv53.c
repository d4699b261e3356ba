/*
 * plain_getenv53.c - the program's getenv (memcheck's, lib/gslice.c,
 * when preloaded) against the C library's own, found in libc.so.6 with
 * dlsym: for every name asked, the same pointer (the same environ
 * entry, or NULL) and errno as it was.  Names: every variable of the
 * environment, its prefixes and extensions, one-byte names, names with
 * '=' in them, the empty name, G_SLICE and other 'G' names, after
 * setenv, putenv, unsetenv, an environ array of the program's own,
 * clearenv and environ set to NULL.
 *
 * Usage: plain_getenv53.  Prints "getenv agrees on N names" and exits
 * 0, or prints the first disagreement and exits 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

typedef char *getenv_fn(const char *);
static getenv_fn *libc_getenv;
static unsigned long asked;

static void same(const char *name)
{
	errno = 1234;
	char *mine = getenv(name);
	int e = errno;
	char *theirs = libc_getenv(name);
	asked++;
	if (mine != theirs || e != 1234) {
		printf("getenv(\"%s\"): %p (%s), the C library's %p (%s); errno %d\n", name,
		       (void *)mine, mine ? mine : "NULL", (void *)theirs, theirs ? theirs : "NULL", e);
		exit(1);
	}
}

/* every variable's name, its prefixes, and the name with bytes after */
static void each_entry(void)
{
	char name[256];
	for (char **e = environ; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (n >= sizeof name - 3)
			continue;
		memcpy(name, *e, n);
		for (size_t k = 0; k <= n; k++) {
			name[k] = '\0';
			same(name);
			name[k] = (*e)[k];
		}
		memcpy(name + n, "=", 2);
		same(name);
		memcpy(name + n, "X", 2);
		same(name);
		if ((*e)[n] == '=' && n + 1 < sizeof name - 3) {
			/* "NAME=" followed by the value's first byte */
			memcpy(name, *e, n + 2);
			name[n + 2] = '\0';
			same(name);
		}
	}
}

static const char *const fixed[] = {
	"", "=", "==", "A", "Z", "a", "_", "G", "G_", "G_SLICE", "G_SLICEX", "G_SLIC",
	"GLIB", "G_MESSAGES_DEBUG", "CK_MAX_MSG_SIZE", "CK_FORK", "HOME", "PATH",
	"LD_PRELOAD", "MEMCHECK_REPORT", "\x80", "\xff\xfe", "é", NULL
};

static void all(void)
{
	for (const char *const *f = fixed; *f; f++)
		same(*f);
	each_entry();
}

int main(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	libc_getenv = libc ? (getenv_fn *)dlsym(libc, "getenv") : NULL;
	if (!libc_getenv) {
		printf("no getenv in libc.so.6\n");
		return 1;
	}
	all();
	/* one-byte names, '=' inside names, empty values, a 'G' first byte */
	setenv("A", "one", 1);
	setenv("G", "", 1);
	setenv("GA", "ga", 1);
	setenv("G_SLICE", "debug-blocks", 1);
	putenv((char *)"B=x=y");
	putenv((char *)"CK_=short");
	putenv((char *)"Q=");
	putenv((char *)"=novalue");
	putenv((char *)"NOEQUALS");
	all();
	same("B=x");
	same("B=x=");
	same("NOEQUALS");
	unsetenv("A");
	unsetenv("G_SLICE");
	all();
	/* a second entry of one name: the first one is the answer */
	static char *own[] = { "DUP=first", "DUP=second", "D=1", "D=2", "DU=3", "G_SLICE=", NULL };
	char **kept = environ;
	environ = own;
	all();
	same("DUP");
	same("D");
	environ = kept;
	all();
	clearenv();
	all();
	environ = NULL;
	all();
	printf("getenv agrees on %lu names\n", asked);
	return 0;
}
