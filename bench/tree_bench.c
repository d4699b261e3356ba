/*
 * tree_bench.c - a parser-shaped program: what memcheck costs where
 * allocation stacks are deep and many.
 *
 *   tree_bench [STEPS] [--docs N (1..64)]
 *
 * It generates N documents (a JSON-like text: nested lists and objects,
 * keys, string literals, numbers; nesting 6..24 levels, fixed seed) once,
 * then parses them one after another by recursive descent into trees of
 * small nodes, each key and string copied into a block of its own, walks
 * each tree for a checksum and frees it, until STEPS blocks have been
 * allocated (whole documents: a run makes exactly the same calls every
 * time).  Each nesting level is two or three frames of the parser
 * (parse_value, parse_list or parse_object, parse_member), under main,
 * run and parse_document: allocations happen 8..70 frames down, from a
 * few call sites reached by many different paths, as in the parsers of
 * real test suites (cJSON, jansson, libyaml).  The generator, the
 * documents and the tree walk allocate nothing.
 *
 * Ends with one line on stdout: steps (blocks allocated), nodes, a
 * checksum, the loop's own seconds, VmHWM (kB), as malloc_bench.c does.
 * Build it as suites build (bench.mk: -O2 -g, frame pointers,
 * -fno-builtin so no pair is optimised away); never link it with
 * memcheck: run.sh preloads it.  The same source built with
 * -fsanitize=leak is the LeakSanitizer row.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define DEFAULT_STEPS 10000000L
#define DEFAULT_DOCS 64
#define DOC_MAX (64 * 1024) /* bytes of one document's text */

/* ---- the documents ------------------------------------------------------ */

struct gen {
	char *p, *end;
	uint64_t rng;
	int max_depth;
};

static void put(struct gen *g, char c)
{
	if (g->p < g->end)
		*g->p++ = c;
}

static void put_word(struct gen *g, int min, int spread)
{
	int n = min + (int)(next_rand(&g->rng) % (uint64_t)spread);
	for (int i = 0; i < n; i++)
		put(g, (char)('a' + next_rand(&g->rng) % 26));
}

/* A value at nesting level d: deeper levels are containers more often,
 * so a document reaches its depth along several paths, not one. */
static void gen_value(struct gen *g, int d)
{
	uint64_t r = next_rand(&g->rng);
	int room = g->end - g->p > 4096; /* the closing leaves of every open level fit */
	int container = room && d < g->max_depth && (d < 3 || r % 100 < 46);
	if (!container) {
		switch (r >> 8 & 3) {
		case 0:
		case 1:
			put(g, '"');
			put_word(g, 3, 21);
			put(g, '"');
			break;
		case 2:
			for (int i = 0, n = 1 + (int)(r >> 16 & 7); i < n; i++)
				put(g, (char)('0' + (r >> (20 + 3 * i) & 7)));
			break;
		default:
			put(g, r >> 24 & 1 ? 't' : 'f');
		}
		return;
	}
	int object = r >> 8 & 1, n = 1 + (int)(r >> 12 & 3);
	put(g, object ? '{' : '[');
	for (int i = 0; i < n; i++) {
		if (i)
			put(g, ',');
		if (object) {
			put_word(g, 2, 10);
			put(g, ':');
		}
		gen_value(g, d + 1);
	}
	put(g, object ? '}' : ']');
}

/* ---- the parser ------------------------------------------------------------ */

enum kind { K_STR, K_NUM, K_BOOL, K_LIST, K_OBJECT };

struct node {
	enum kind kind;
	long num;
	char *key; /* a member's name */
	char *str;
	struct node *child, *next;
};

struct parser {
	const char *p;
	long steps; /* blocks allocated */
};

static struct node *parse_value(struct parser *ps);

static struct node *new_node(struct parser *ps, enum kind kind)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		return NULL;
	memset(n, 0, sizeof *n);
	n->kind = kind;
	ps->steps++;
	return n;
}

/* The parser's own strndup, as parsers have one. */
static char *copy_text(struct parser *ps, const char *s, size_t len)
{
	char *c = malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = 0;
	ps->steps++;
	return c;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		free_tree(n->child);
		free(n->key);
		free(n->str);
		free(n);
		n = next;
	}
}

static char *parse_word(struct parser *ps)
{
	const char *s = ps->p;
	while (*ps->p >= 'a' && *ps->p <= 'z')
		ps->p++;
	return copy_text(ps, s, (size_t)(ps->p - s));
}

static struct node *parse_member(struct parser *ps)
{
	char *key = parse_word(ps);
	if (!key || *ps->p++ != ':') {
		free(key);
		return NULL;
	}
	struct node *v = parse_value(ps);
	if (!v) {
		free(key);
		return NULL;
	}
	v->key = key;
	return v;
}

/* A list or an object: its members chained under one node. */
static struct node *parse_container(struct parser *ps, int object)
{
	struct node *c = new_node(ps, object ? K_OBJECT : K_LIST), **tail;
	if (!c)
		return NULL;
	tail = &c->child;
	ps->p++;
	for (;;) {
		struct node *m = object ? parse_member(ps) : parse_value(ps);
		if (!m) {
			free_tree(c);
			return NULL;
		}
		*tail = m;
		tail = &m->next;
		char d = *ps->p++;
		if (d == (object ? '}' : ']'))
			return c;
		if (d != ',') {
			free_tree(c);
			return NULL;
		}
	}
}

static struct node *parse_string(struct parser *ps)
{
	struct node *n = new_node(ps, K_STR);
	if (!n)
		return NULL;
	const char *s = ++ps->p;
	while (*ps->p && *ps->p != '"')
		ps->p++;
	n->str = copy_text(ps, s, (size_t)(ps->p - s));
	if (!n->str || *ps->p++ != '"') {
		free_tree(n);
		return NULL;
	}
	return n;
}

static struct node *parse_value(struct parser *ps)
{
	struct node *n;
	switch (*ps->p) {
	case '[':
	case '{':
		return parse_container(ps, *ps->p == '{');
	case '"':
		return parse_string(ps);
	case 't':
	case 'f':
		n = new_node(ps, K_BOOL);
		if (n)
			n->num = *ps->p++ == 't';
		return n;
	default:
		if (*ps->p < '0' || *ps->p > '9')
			return NULL;
		n = new_node(ps, K_NUM);
		if (n)
			n->num = strtol(ps->p, (char **)&ps->p, 10);
		return n;
	}
}

static struct node *parse_document(struct parser *ps, const char *text)
{
	ps->p = text;
	struct node *n = parse_value(ps);
	if (n && *ps->p) {
		free_tree(n);
		return NULL;
	}
	return n;
}

/* ---- the run --------------------------------------------------------------- */

static uint64_t tree_sum(const struct node *n, uint64_t depth)
{
	uint64_t sum = 0;
	for (; n; n = n->next) {
		sum += depth * 31 + (uint64_t)n->kind + (uint64_t)n->num;
		if (n->key)
			sum += (unsigned char)n->key[0] * 7u;
		if (n->str)
			sum += strlen(n->str);
		sum += tree_sum(n->child, depth + 1);
	}
	return sum;
}

static char docs[64][DOC_MAX]; /* 4 MiB: the exit scan reads it all as roots */

/* Parse, walk and free documents round-robin until steps blocks. */
static __attribute__((noinline)) int run(long steps, int ndocs, uint64_t *sum, long *nodes)
{
	struct parser ps = { 0 };
	for (long d = 0; ps.steps < steps; d++) {
		long before = ps.steps;
		struct node *t = parse_document(&ps, docs[d % ndocs]);
		if (!t)
			return -1;
		*sum += tree_sum(t, 1);
		*nodes += ps.steps - before;
		free_tree(t);
	}
	return 0;
}

static void usage(void)
{
	static const char msg[] = "usage: tree_bench [STEPS] [--docs N (1..64)]\n";
	if (write(2, msg, sizeof msg - 1) < 0)
		_exit(2);
	exit(2);
}

int main(int argc, char **argv)
{
	long steps = DEFAULT_STEPS, ndocs = DEFAULT_DOCS;
	for (int i = 1; i < argc; i++) {
		long *dst = &steps;
		const char *v = argv[i];
		char *end;
		if (!strcmp(argv[i], "--docs")) {
			if (i + 1 >= argc)
				usage();
			dst = &ndocs;
			v = argv[++i];
		} else if (argv[i][0] == '-') {
			usage();
		}
		*dst = strtol(v, &end, 10);
		if (*end || *dst < 0)
			usage();
	}
	if (ndocs < 1 || ndocs > 64)
		usage();
	for (int d = 0; d < ndocs; d++) {
		struct gen g = { docs[d], docs[d] + DOC_MAX - 1,
				 0x9e3779b97f4a7c15ull * (uint64_t)(d + 1), 8 + d % 33 };
		gen_value(&g, 0);
		*g.p = 0;
	}
	uint64_t sum = 0;
	long nodes = 0;
	double t0 = now();
	if (run(steps, (int)ndocs, &sum, &nodes)) {
		static const char msg[] = "tree_bench: parse error or out of memory\n";
		if (write(2, msg, sizeof msg - 1) < 0)
			return 1;
		return 1;
	}
	double secs = now() - t0;
	printf("mode=tree steps=%ld docs=%ld blocks=%ld checksum=%llu loop_s=%.4f vmhwm_kb=%ld\n",
	       steps, ndocs, nodes, (unsigned long long)sum, secs, vm_hwm_kb());
	return 0;
}
