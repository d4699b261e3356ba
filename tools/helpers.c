/*
 * helpers.c - what every file of the memcheck command calls: messages
 * (say, die), allocation that cannot fail (x*alloc, xstrdup,
 * xasprintf), and the two ways a path is shown (base_name, short_path).
 *
 * The bottom of the command's layers (tools/layers.txt): it calls nothing
 * of tools/ but the C library, so any file may call it without a circle.
 * The CLI is an ordinary program: out of memory is said and exits 2
 * (die), there is nothing a command could do about it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One line "memcheck: MESSAGE", the message escaped as the library's
 * text is (mc_text_escape): a command, a file or an allocator named
 * with a newline or a terminal's escape in it (argv, paths) made two
 * lines of one, or reached the terminal (harden46: "memcheck: ./ev",
 * "il" and a colour change for a program named "ev\nil\e[31m"). */
static void say_line(const char *fmt, va_list ap)
{
	char *text = NULL;
	if (vasprintf(&text, fmt, ap) < 0) {
		fputs("memcheck: out of memory\n", stderr);
		return;
	}
	size_t cap = 6 * strlen(text) + 1;   /* \u00NN: six bytes a byte at most */
	char *shown = malloc(cap);
	fprintf(stderr, "memcheck: %s\n", shown ? mc_text_escape(text, shown, cap) : text);
	free(shown);
	free(text);
}

void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* the command's own stdout first, so that the two interleave as
	 * they were written when both go to one file */
	fflush(stdout);
	say_line(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_line(fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* A size of 0 asks for 1 byte: NULL then always means out of memory. */
void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

void join_colon(char **list, const char *item)
{
	char *joined = *list ? xasprintf("%s:%s", *list, item) : xstrdup(item);
	free(*list);
	*list = joined;
}

const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The working directory is read once: memcheck never changes it. */
const char *short_path(const char *s)
{
	static char cwd[4096];
	static size_t n;
	if (!n && getcwd(cwd, sizeof cwd - 1)) {
		n = strlen(cwd);
		if (n > 1)
			cwd[n++] = '/';
		else
			n = 0; /* "/": nothing worth cutting */
	}
	if (n && strncmp(s, cwd, n) == 0 && s[n])
		return s + n;
	return s;
}
