/*
 * cli_prog.c - a command for `memcheck run` to run (tests/test_cli.c).
 * Does each step named on its command line, in order; no stdio (its
 * buffers would be blocks left in the process region), so only the steps
 * that mean to fail fail.
 *
 * usage: cli_prog STEP...
 *   pass           region "alloc_free": ten blocks allocated and freed
 *   leak           region "leaky": 1000 bytes allocated and lost
 *   big KIB        region "big": KIB KiB live at once, then freed
 *   iter N         N regions named "iter"
 *   xml            a region whose name needs XML escapes
 *   out            "hello stdout" on stdout, "hello stderr" on stderr
 *   env            LD_PRELOAD, MEMCHECK_BUDGET_NAME, MEMCHECK_BASELINE and
 *                  MEMCHECK_BUDGET as "NAME=value" lines on stdout ("NAME
 *                  unset" when unset)
 *   fork           a child process that does "pass" and exits 0
 *   child-lose N   a child process that loses 40 bytes (no region of its
 *                  own: its process record) and exits N; this one goes on
 *   crash          raise SIGSEGV
 *   crash-under A  raise SIGSEGV when memcheck's allocator is A
 *   exit N         exit with status N now
 *   rm FILE        remove FILE (a budget file, mid-run)
 *   rm-budget      remove the file MEMCHECK_BUDGET names
 *   rm-supp        remove the files MEMCHECK_SUPPRESSIONS names
 *   strict         from here on, a region that fails makes the program
 *                  exit 1 at the end, as a test suite whose test failed
 *                  on memcheck_end would
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memcheck/memcheck.h>

static int strict, failed;
static void *volatile sink;

static void say(int fd, const char *s)
{
	ssize_t w = write(fd, s, strlen(s));
	(void)w;
}

static void end(void)
{
	if (memcheck_end(NULL) != 0 && strict)
		failed = 1;
}

static void pass(void)
{
	memcheck_begin("alloc_free");
	for (int i = 0; i < 10; i++) {
		sink = malloc(100 + (size_t)i);
		free(sink);
	}
	sink = NULL;
	end();
}

static void leak(void)
{
	memcheck_begin("leaky");
	sink = malloc(1000);
	sink = NULL; /* lost */
	end();
}

static void big(long kib)
{
	memcheck_begin("big");
	char *p = malloc((size_t)kib * 1024);
	if (p)
		memset(p, 1, (size_t)kib * 1024);
	sink = p;
	free(p);
	sink = NULL;
	end();
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *arg = i + 1 < argc ? argv[i + 1] : "0";
		if (!strcmp(s, "pass")) {
			pass();
		} else if (!strcmp(s, "leak")) {
			leak();
		} else if (!strcmp(s, "big")) {
			big(atol(arg));
			i++;
		} else if (!strcmp(s, "iter")) {
			for (long n = atol(arg); n > 0; n--) {
				memcheck_begin("iter");
				free(malloc(64));
				end();
			}
			i++;
		} else if (!strcmp(s, "xml")) {
			memcheck_begin("x<&>\"'\t\x01\xc3\xa9]]>");
			free(malloc(8));
			end();
		} else if (!strcmp(s, "out")) {
			say(1, "hello stdout\n");
			say(2, "hello stderr\n");
		} else if (!strcmp(s, "env")) {
			static const char *const names[] = { "LD_PRELOAD", "MEMCHECK_BUDGET_NAME",
							     "MEMCHECK_BASELINE", "MEMCHECK_BUDGET" };
			for (int k = 0; k < 4; k++) {
				const char *v = getenv(names[k]);
				say(1, names[k]);
				say(1, v ? "=" : " unset");
				say(1, v ? v : "");
				say(1, "\n");
			}
		} else if (!strcmp(s, "fork")) {
			pid_t pid = fork();
			if (pid == 0) {
				pass();
				exit(0);
			}
			int st;
			waitpid(pid, &st, 0);
		} else if (!strcmp(s, "child-lose")) {
			pid_t pid = fork();
			if (pid == 0) {
				sink = malloc(40);
				sink = NULL;
				exit(atoi(arg));
			}
			int st;
			waitpid(pid, &st, 0);
			i++;
		} else if (!strcmp(s, "crash")) {
			raise(SIGSEGV);
		} else if (!strcmp(s, "crash-under")) {
			if (!strcmp(memcheck_allocator(), arg))
				raise(SIGSEGV);
			i++;
		} else if (!strcmp(s, "exit")) {
			exit(atoi(arg));
		} else if (!strcmp(s, "rm")) {
			unlink(arg);
			i++;
		} else if (!strcmp(s, "rm-budget")) {
			if (getenv("MEMCHECK_BUDGET"))
				unlink(getenv("MEMCHECK_BUDGET"));
		} else if (!strcmp(s, "rm-supp")) {
			char files[4096];
			const char *e = getenv("MEMCHECK_SUPPRESSIONS");
			size_t n = e ? strlen(e) : 0;
			n = n < sizeof files ? n : sizeof files - 1;
			memcpy(files, e ? e : "", n);
			files[n] = 0;
			for (char *f = strtok(files, ":"); f; f = strtok(NULL, ":"))
				unlink(f);
		} else if (!strcmp(s, "strict")) {
			strict = 1;
		} else {
			say(2, "cli_prog: unknown step\n");
			return 64;
		}
	}
	return failed;
}
