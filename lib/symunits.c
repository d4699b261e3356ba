/*
 * symunits.c - the compile units' address ranges of a module whose
 * units libdw cannot find by address (no .debug_aranges: clang without
 * -gdwarf-aranges), read once into a table sorted by start; the sort and
 * search serve symscopes.c's table of a unit's top-level functions too.
 * Not which module or unit a frame is in (symname.c's cu_by_walk).
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

void cu_table_free(struct cu_table *t)
{
	mc_buf_free(&t->buf);
	*t = (struct cu_table){ 0 };
}

/* Heapsort by start: in place, without malloc (qsort may call it). */
static void sift(struct cu_range *r, size_t i, size_t n)
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && r[c + 1].start > r[c].start)
			c++;
		if (r[i].start >= r[c].start)
			return;
		struct cu_range t = r[i];
		r[i] = r[c];
		r[c] = t;
	}
}

/* The struct cu_range[] in b sorted by start, each maxend set; how
 * many (0 when b ran out of memory). */
size_t ranges_sort(struct mc_buf *b)
{
	struct cu_range *r = (struct cu_range *)b->s;
	size_t n = b->oom ? 0 : b->len / sizeof *r;
	for (size_t i = n / 2; i-- > 0;)
		sift(r, i, n);
	for (size_t i = n; i-- > 1;) {
		struct cu_range x = r[0];
		r[0] = r[i];
		r[i] = x;
		sift(r, 0, i);
	}
	for (size_t i = 1; i < n; i++)
		if (r[i].maxend < r[i - 1].maxend)
			r[i].maxend = r[i - 1].maxend;
	return n;
}

void cu_table_build(struct cu_table *t, Dwarf *dbg)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	t->built = true;
	while (dw.nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Addr base, start, end;
		if (dw.offdie(dbg, off + hsize, &die))
			for (ptrdiff_t o = 0; (o = dw.ranges(&die, o, &base, &start, &end)) > 0;) {
				/* Start 0: code the linker discarded. */
				struct cu_range r = { start, end, end, off + hsize };
				if (start && start < end)
					mc_buf_put(&t->buf, (const char *)&r, sizeof r);
			}
		off = next;
	}
	t->n = ranges_sort(&t->buf);
}
