/* wordcount.c - a chained hash table of words; grows by rehashing. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wordcount.h"

struct entry {
	struct entry *next;
	size_t count;
	char word[];
};

struct wordcount {
	struct entry **buckets;
	size_t nbuckets, nwords;
};

static size_t hash(const char *s, size_t n)
{
	size_t h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)tolower((unsigned char)s[i]);
	return h;
}

struct wordcount *wc_new(void)
{
	struct wordcount *wc = calloc(1, sizeof *wc);
	if (!wc)
		return NULL;
	wc->nbuckets = 8;
	wc->buckets = calloc(wc->nbuckets, sizeof *wc->buckets);
	if (!wc->buckets) {
		free(wc);
		return NULL;
	}
	return wc;
}

static int grow(struct wordcount *wc)
{
	size_t n = wc->nbuckets * 2;
	struct entry **b = calloc(n, sizeof *b);
	if (!b)
		return -1;
	for (size_t i = 0; i < wc->nbuckets; i++) {
		for (struct entry *e = wc->buckets[i], *next; e; e = next) {
			next = e->next;
			size_t k = hash(e->word, strlen(e->word)) % n;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(wc->buckets);
	wc->buckets = b;
	wc->nbuckets = n;
	return 0;
}

static int add_word(struct wordcount *wc, const char *w, size_t n)
{
	size_t k = hash(w, n) % wc->nbuckets;
	for (struct entry *e = wc->buckets[k]; e; e = e->next) {
		if (strlen(e->word) == n && strncasecmp(e->word, w, n) == 0) {
			e->count++;
			return 0;
		}
	}
	if (wc->nwords + 1 > wc->nbuckets && grow(wc) < 0)
		return -1;
	struct entry *e = malloc(sizeof *e + n + 1);
	if (!e)
		return -1;
	for (size_t i = 0; i < n; i++)
		e->word[i] = (char)tolower((unsigned char)w[i]);
	e->word[n] = 0;
	e->count = 1;
	k = hash(w, n) % wc->nbuckets;
	e->next = wc->buckets[k];
	wc->buckets[k] = e;
	wc->nwords++;
	return 0;
}

int wc_add_text(struct wordcount *wc, const char *text)
{
	const char *p = text;
	while (*p) {
		while (*p && !isalpha((unsigned char)*p))
			p++;
		const char *start = p;
		while (isalpha((unsigned char)*p))
			p++;
		if (p > start && add_word(wc, start, (size_t)(p - start)) < 0)
			return -1;
	}
	return 0;
}

size_t wc_count(const struct wordcount *wc, const char *word)
{
	size_t n = strlen(word);
	for (struct entry *e = wc->buckets[hash(word, n) % wc->nbuckets]; e; e = e->next)
		if (strcasecmp(e->word, word) == 0)
			return e->count;
	return 0;
}

size_t wc_distinct(const struct wordcount *wc)
{
	return wc->nwords;
}

void wc_free(struct wordcount *wc)
{
	if (!wc)
		return;
	for (size_t i = 0; i < wc->nbuckets; i++) {
		for (struct entry *e = wc->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(wc->buckets);
	free(wc);
}
