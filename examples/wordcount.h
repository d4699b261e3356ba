/* wordcount.h - a tiny word-frequency table, the code under test in the
 * example suite. */
#ifndef WORDCOUNT_H
#define WORDCOUNT_H
#include <stddef.h>

struct wordcount;
struct wordcount *wc_new(void);
/* Count every word (letters only) of text; returns 0 or -1 on ENOMEM. */
int wc_add_text(struct wordcount *wc, const char *text);
size_t wc_count(const struct wordcount *wc, const char *word);
size_t wc_distinct(const struct wordcount *wc);
void wc_free(struct wordcount *wc);
#endif
