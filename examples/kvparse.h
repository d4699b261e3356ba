/* kvparse.h - "key=value" lines into a list (the memcheck oom demo). */
#ifndef KVPARSE_H
#define KVPARSE_H

#include <stddef.h>

struct kv_list;

/* Parse text, one "key=value" per line (lines without '=' are skipped).
 * NULL when out of memory. */
struct kv_list *kv_parse(const char *text);
/* The value of key, or NULL. */
const char *kv_get(const struct kv_list *l, const char *key);
size_t kv_count(const struct kv_list *l);
void kv_free(struct kv_list *l);

#endif
