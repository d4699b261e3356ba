/*
 * symmemo.c - the frame memo: what mc_symbolize_frames and
 * mc_symbolize_quick gave each (pc, max) this session, so that a frame
 * is resolved once however many records hold it.  Not how a frame is
 * resolved (symname.c).
 */
#include <string.h>

#include "internal.h"
#include "symbolize.h"

/* What mc_symbolize_frames gave each (pc, max) in this session, so
 * that a frame is resolved once however many leak records hold it and
 * whether suppression matching or the report asks: a return address in
 * a parser's recursion is in most of its records, and each resolution of
 * its inlined functions walks its compile unit's DIEs (parson's tests:
 * 6,300 resolutions of a few hundred addresses, 6.3 G instructions).
 * An open-addressed table of (pc, max) -> the frames, packed in an arena:
 * each frame's line, the lengths of its function, linkage, file and
 * object (two bytes each: a C++ symbol's name passes 255), then the
 * four, each ending in a NUL.  Cleared with the session (each report's end).
 * The table starts at PC_FIRST slots and doubles: a short process's exit
 * holds a few dozen addresses, and a first table of 1024 slots (16 KiB,
 * probed before written) was 8-10 page faults of a leaking
 * bench/suite_test's exit, two a page. */
#define PC_FIRST 128
struct pc_entry {
	uintptr_t pc;        /* 0: a free slot */
	uint32_t off;        /* in pc_arena */
	uint16_t max, n;
};
_Static_assert(sizeof((struct mc_frame_info *)0)->file <= 65536 &&
	       sizeof((struct mc_frame_info *)0)->object <= 65536 &&
	       sizeof((struct mc_frame_info *)0)->function <= 65536 &&
	       sizeof((struct mc_frame_info *)0)->linkage <= 65536,
	       "a cached string's length is two bytes");
static struct pc_entry *pc_tab;
static size_t pc_cap, pc_used;
struct mc_buf pc_arena;

void pc_cache_clear(void)
{
	if (pc_tab)
		mc_unmap(pc_tab, pc_cap * sizeof *pc_tab);
	pc_tab = NULL;
	pc_cap = pc_used = 0;
	mc_buf_free(&pc_arena);
	pc_arena = (struct mc_buf){ 0 };
}

/* The memo forgotten in a forked child: another thread may have been
 * growing or unmapping it. */
void pc_cache_drop(void)
{
	pc_tab = NULL;
	pc_cap = pc_used = 0;
	pc_arena = (struct mc_buf){ 0 };
}

static struct pc_entry *pc_slot(struct pc_entry *tab, size_t cap, uintptr_t pc, int max)
{
	size_t i = (size_t)((pc ^ (uintptr_t)max) * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
	while (tab[i].pc && (tab[i].pc != pc || tab[i].max != max))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* The cached frames of (pc, max) into out; 0 when there are none.  Each
 * string's length is stored: a copy is one memcpy of it with its NUL,
 * where a strlen and a memcpy a string cost ~250 instructions a quick
 * frame (a measured /bin/date's exit: 201 of them, 50 K). */
int pc_cache_get(uintptr_t pc, int max, struct mc_frame_info *out)
{
	if (!pc_tab || !pc)
		return 0;
	const struct pc_entry *e = pc_slot(pc_tab, pc_cap, pc, max);
	if (!e->pc)
		return 0;
	const char *p = pc_arena.s + e->off;
	for (int i = 0; i < e->n; i++) {
		uint16_t len[4];  /* fixed sizes: loads, not calls (-fno-builtin) */
		__builtin_memcpy(&out[i].line, p, sizeof out[i].line);
		__builtin_memcpy(len, p + sizeof out[i].line, sizeof len);
		p += sizeof out[i].line + sizeof len;
		memcpy(out[i].function, p, len[0] + 1u);
		p += len[0] + 1u;
		memcpy(out[i].linkage, p, len[1] + 1u);
		p += len[1] + 1u;
		memcpy(out[i].file, p, len[2] + 1u);
		p += len[2] + 1u;
		memcpy(out[i].object, p, len[3] + 1u);
		p += len[3] + 1u;
	}
	return e->n;
}

/* Room for one more entry (at most half full); false: none. */
bool pc_room(void)
{
	if (2 * (pc_used + 1) <= pc_cap)
		return true;
	size_t cap = pc_cap ? 2 * pc_cap : PC_FIRST;
	struct pc_entry *tab = mc_map(cap * sizeof *tab);
	if (!tab)
		return false;
	mc_write_first(tab, cap * sizeof *tab);
	for (size_t i = 0; i < pc_cap; i++)
		if (pc_tab[i].pc)
			*pc_slot(tab, cap, pc_tab[i].pc, pc_tab[i].max) = pc_tab[i];
	if (pc_tab)
		mc_unmap(pc_tab, pc_cap * sizeof *pc_tab);
	pc_tab = tab;
	pc_cap = cap;
	return true;
}

/* One frame's line and its four strings (function, linkage, file,
 * object: len[j] bytes each, at most their fields' size - 1) appended
 * to the arena. */
void pc_frame(int line, const char *const str[4], const size_t len[4])
{
	char rec[sizeof line + 8 + sizeof(struct mc_frame_info)];  /* the lengths' sum: 1280 */
	size_t k = sizeof line + 8;
	memcpy(rec, &line, sizeof line);
	for (int j = 0; j < 4; j++) {
		uint16_t l = (uint16_t)len[j];
		memcpy(rec + sizeof line + 2 * j, &l, 2);
		memcpy(rec + k, str[j], len[j]);
		rec[k + len[j]] = 0;
		k += len[j] + 1;
	}
	mc_buf_put(&pc_arena, rec, k);
}

/* The entry (pc, max) -> the n frames appended from off. */
void pc_commit(uintptr_t pc, int max, size_t off, int n)
{
	if (pc_arena.oom) {
		pc_cache_clear();
		return;
	}
	*pc_slot(pc_tab, pc_cap, pc, max) = (struct pc_entry){ pc, (uint32_t)off, (uint16_t)max,
								 (uint16_t)n };
	pc_used++;
}

void pc_cache_put(uintptr_t pc, int max, const struct mc_frame_info *f, int n)
{
	if (!pc || pc_arena.len > UINT32_MAX / 2 || max > UINT16_MAX || !pc_room())
		return;
	size_t off = pc_arena.len;
	for (int i = 0; i < n; i++) {
		const char *str[4] = { f[i].function, f[i].linkage, f[i].file, f[i].object };
		const size_t cap[4] = { sizeof f[i].function, sizeof f[i].linkage, sizeof f[i].file,
					sizeof f[i].object };
		size_t len[4];
		for (int j = 0; j < 4; j++)    /* as a copy cuts it: cap - 1 at most */
			len[j] = strnlen(str[j], cap[j] - 1);
		pc_frame(f[i].line, str, len);
	}
	pc_commit(pc, max, off, n);
}
