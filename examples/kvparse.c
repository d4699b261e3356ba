/*
 * kvparse.c - "key=value" lines into a list: the demo of `memcheck oom`
 * (make oom-demo).  Every test of check_kvparse.c passes, yet two error
 * paths here are wrong, and only failing allocations shows them:
 *   - kv_add does not check its first malloc (a NULL dereference), and
 *   - when the value cannot be copied, kv_add frees the entry but not its
 *     key (a leak on the error path).
 * Both are deliberate; the lines are marked for examples.mk's check.
 */
#include <stdlib.h>
#include <string.h>

#include "kvparse.h"

struct kv {
	char *key, *value;
	struct kv *next;
};

struct kv_list {
	struct kv *head;
	size_t n;
};

static char *copy(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = 0;
	return dst;
}

/* One line; 0, or -1 when out of memory. */
static int kv_add(struct kv_list *l, const char *line, size_t len)
{
	const char *eq = memchr(line, '=', len);
	if (!eq)
		return 0;
	size_t klen = (size_t)(eq - line), vlen = len - klen - 1;
	struct kv *e = malloc(sizeof *e); /* OOM-DEMO: unchecked */
	e->key = malloc(klen + 1);
	if (!e->key) {
		free(e);
		return -1;
	}
	e->value = malloc(vlen + 1); /* OOM-DEMO: leaks the key */
	if (!e->value) {
		free(e);
		return -1;
	}
	copy(e->key, line, klen);
	copy(e->value, eq + 1, vlen);
	e->next = l->head;
	l->head = e;
	l->n++;
	return 0;
}

struct kv_list *kv_parse(const char *text)
{
	struct kv_list *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		if (kv_add(l, text, len) < 0) {
			kv_free(l);
			return NULL;
		}
		text += len + (nl != NULL);
	}
	return l;
}

const char *kv_get(const struct kv_list *l, const char *key)
{
	for (const struct kv *e = l ? l->head : NULL; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e->value;
	return NULL;
}

size_t kv_count(const struct kv_list *l)
{
	return l ? l->n : 0;
}

void kv_free(struct kv_list *l)
{
	if (!l)
		return;
	for (struct kv *e = l->head, *next; e; e = next) {
		next = e->next;
		free(e->key);
		free(e->value);
		free(e);
	}
	free(l);
}
