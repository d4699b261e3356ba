/*
 * regions.c - nesting, renaming, depth and peaks of explicit regions.
 * Checks what only the program can see (return values, struct fields)
 * itself and says on stderr which figure was wrong ("regions CASE:
 * FIGURE = GOT, expected WANT"); the test reads the JSON report for the
 * rest.  Exit status: the number of wrong figures.
 *
 * usage: regions CASE   (nested, before, peak, peak_nested, peak_after_frees,
 *        end_without_begin, rename, depth, stack, deep, name_escapes,
 *        name_utf8_cut, name_bad_utf8, name_forged, unended, status)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memcheck/memcheck.h>

static int failures;
static const char *kase;

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		fprintf(stderr, "regions %s: %s = %llu, expected %llu\n", kase, what,
			(unsigned long long)got, (unsigned long long)want);
		failures++;
	}
}

/* Leaks are made in functions of their own, so stacks name them. */
void *leak_outer(void);
void *leak_inner(void);
void *leaky_function(size_t n);
int site_line;

void *leak_outer(void)
{
	return malloc(100);
}

void *leak_inner(void)
{
	return malloc(200);
}

void *leaky_function(size_t n)
{
	void *p = malloc(n); site_line = __LINE__; /* the line the test looks for */
	return p;
}

static void case_nested(void)
{
	struct memcheck_result ri, ro;
	memcheck_begin("outer");
	void *a = leak_outer();
	memcheck_begin("inner");
	void *b = leak_inner();
	free(malloc(5));
	memcheck_end(&ri);
	memcheck_end(&ro);
	expect("inner allocs", ri.allocs, 2);
	expect("inner frees", ri.frees, 1);
	expect("inner live_blocks", ri.live_blocks, 1);
	expect("inner live_bytes", ri.live_bytes, 200);
	expect("inner pass", (uint64_t)ri.pass, 0);
	expect("outer allocs", ro.allocs, 3);
	expect("outer frees", ro.frees, 1);
	expect("outer live_blocks", ro.live_blocks, 2);
	expect("outer live_bytes", ro.live_bytes, 300);
	free(a);
	free(b);
}

static void case_before(void)
{
	struct memcheck_result r;
	void *p = malloc(1000);
	memcheck_begin("before");
	free(p);
	free(malloc(10));
	int rc = memcheck_end(&r);
	expect("memcheck_end() (clean region)", (uint64_t)rc, 0);
	expect("allocs", r.allocs, 1);
	expect("frees", r.frees, 2);
	expect("bytes_freed", r.bytes_freed, 1010);
	expect("live_blocks", r.live_blocks, 0);
	expect("definitely_lost.blocks", r.definitely_lost.blocks, 0);
}

static void case_peak(void)
{
	struct memcheck_result r;
	memcheck_begin("peak");
	void *p = malloc(1 << 20);
	free(p);
	p = malloc(256 << 10);
	free(p);
	memcheck_end(&r);
	expect("peak_live_bytes", r.peak_live_bytes, 1 << 20);
}

static void case_peak_nested(void)
{
	struct memcheck_result ri, ro;
	memcheck_begin("peak_outer");
	void *a = malloc(512 << 10);
	memcheck_begin("peak_inner");
	void *b = malloc(1 << 20);
	free(b);
	memcheck_end(&ri);
	free(a);
	a = malloc(64 << 10);
	free(a);
	memcheck_end(&ro);
	expect("inner peak_live_bytes", ri.peak_live_bytes, 1 << 20);
	expect("outer peak_live_bytes", ro.peak_live_bytes, (512 << 10) + (1 << 20));
}

/* A region that frees older blocks before it allocates: the process's
 * live bytes never rise above where they were when it began, yet what it
 * keeps was live at once; its peak is never below what it left. */
static void case_peak_after_frees(void)
{
	struct memcheck_result r;
	void *old[10];
	for (int i = 0; i < 10; i++)
		old[i] = malloc(1000);
	memcheck_begin("peak_after_frees");
	for (int i = 0; i < 10; i++)
		free(old[i]);
	void *kept = malloc(100);
	memcheck_end(&r);
	expect("live_bytes", r.live_bytes, 100);
	expect("peak_live_bytes", r.peak_live_bytes, 100);
	free(kept);
}

static void case_end_without_begin(void)
{
	struct memcheck_result r;
	expect("memcheck_end(&r) with no region open", (uint64_t)(int64_t)memcheck_end(&r),
	       (uint64_t)-1);
	expect("memcheck_end(NULL) with no region open", (uint64_t)(int64_t)memcheck_end(NULL),
	       (uint64_t)-1);
	memcheck_begin("once");
	expect("memcheck_end() of an open region", (uint64_t)(int64_t)memcheck_end(NULL), 0);
	expect("memcheck_end() after the last region ended",
	       (uint64_t)(int64_t)memcheck_end(NULL), (uint64_t)-1);
}

static void case_rename(void)
{
	struct memcheck_result r;
	expect("memcheck_rename() with no region open",
	       (uint64_t)(int64_t)memcheck_rename("nothing"), (uint64_t)-1);
	memcheck_begin("first");
	memcheck_begin("inner_first");
	expect("memcheck_rename(\"inner_second\")",
	       (uint64_t)(int64_t)memcheck_rename("inner_second"), 0);
	memcheck_end(&r);
	expect("name is inner_second", strcmp(r.name, "inner_second"), 0);
	expect("memcheck_rename(\"second\")", (uint64_t)(int64_t)memcheck_rename("second"), 0);
	memcheck_end(&r);
	expect("name is second", strcmp(r.name, "second"), 0);
}

static void case_depth(void)
{
	expect("depth before any region", (uint64_t)memcheck_depth(), 0);
	memcheck_begin("d1");
	expect("depth in one region", (uint64_t)memcheck_depth(), 1);
	memcheck_begin("d2");
	expect("depth in two regions", (uint64_t)memcheck_depth(), 2);
	memcheck_end(NULL);
	expect("depth after one end", (uint64_t)memcheck_depth(), 1);
	memcheck_end(NULL);
	expect("depth after both ended", (uint64_t)memcheck_depth(), 0);
}

static void case_stack(void)
{
	memcheck_begin("stack");
	void *p = leaky_function(77);
	memcheck_end(NULL);
	free(p);
	printf("line=%d\n", site_line);
}

/* 70 regions nested: memcheck reports the 64 outermost; every end still
 * answers 0 or 1, and the 71st -1. */
static void case_deep(void)
{
	char name[16];
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof name, "deep%d", i);
		memcheck_begin(name);
	}
	expect("depth with 70 regions open", (uint64_t)memcheck_depth(), 70);
	for (int i = 0; i < 70; i++) {
		int rc = memcheck_end(NULL);
		if (rc != 0) {
			fprintf(stderr, "regions deep: end #%d = %d, expected 0\n", i + 1, rc);
			failures++;
		}
	}
	expect("depth after 70 ends", (uint64_t)memcheck_depth(), 0);
	expect("the 71st memcheck_end()", (uint64_t)(int64_t)memcheck_end(NULL), (uint64_t)-1);
}

/* Names that need escaping in JSON. */
static void case_name_escapes(void)
{
	memcheck_begin("q\" b\\ n\n t\t c\x01 \xc3\xa9 end");
	memcheck_end(NULL);
}

/* A name longer than struct memcheck_result.name (128 bytes) whose
 * 127th and 128th bytes are one two-byte UTF-8 character. */
static void case_name_utf8_cut(void)
{
	char name[200];
	memset(name, 'a', 126);
	strcpy(name + 126, "\xc3\xa9\xc3\xa9");
	memcheck_begin(name);
	memcheck_end(NULL);
}

/* A name that is not UTF-8 (a Latin-1 byte). */
static void case_name_bad_utf8(void)
{
	memcheck_begin("caf\xe9");
	memcheck_end(NULL);
}

/* A name that would forge a line of the text report, colour the
 * terminal and come out as Latin-1 (test_output.c), leaking a block so
 * that the full report names it twice. */
static void case_name_forged(void)
{
	memcheck_begin("x\n==1234== PASS \x1b[31mred caf\xe9 \xc2\x9b" "2J");
	leak_outer();
	memcheck_end(NULL);
}

/* A region still open when main returns: reported at exit. */
static void case_unended(void)
{
	memcheck_begin("unended");
	free(malloc(10));
}

/* memcheck_live_bytes(), memcheck_active(), memcheck_allocator() */
static void case_status(void)
{
	uint64_t before = memcheck_live_bytes();
	void *p = malloc(1000);
	expect("memcheck_live_bytes() after malloc(1000) - before", memcheck_live_bytes() - before,
	       1000);
	free(p);
	expect("memcheck_live_bytes() after free - before", memcheck_live_bytes() - before, 0);
	expect("memcheck_active()", (uint64_t)memcheck_active(), 1);
	const char *a = memcheck_allocator();
	expect("memcheck_allocator() is \"glibc\"", a && strcmp(a, "glibc") == 0, 1);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "nested", case_nested },
	{ "before", case_before },
	{ "peak", case_peak },
	{ "peak_nested", case_peak_nested },
	{ "peak_after_frees", case_peak_after_frees },
	{ "end_without_begin", case_end_without_begin },
	{ "rename", case_rename },
	{ "depth", case_depth },
	{ "stack", case_stack },
	{ "deep", case_deep },
	{ "name_escapes", case_name_escapes },
	{ "name_utf8_cut", case_name_utf8_cut },
	{ "name_bad_utf8", case_name_bad_utf8 },
	{ "name_forged", case_name_forged },
	{ "unended", case_unended },
	{ "status", case_status },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++) {
		if (strcmp(argv[1], cases[i].name) == 0) {
			kase = cases[i].name;
			cases[i].fn();
			return failures > 100 ? 100 : failures;
		}
	}
	fprintf(stderr, "usage: regions CASE\n");
	return 125;
}
