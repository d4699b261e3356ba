/*
 * symkeys.c - the objects behind the frames, as symcache.c's and
 * suppcache.c's files key them: elfmod.c's reading of the object at an
 * address (own_module) with its debug strings (own_str) and whether its
 * full frames may be kept under its build ID (own_key); each object's
 * quick key, found once a session (qkey_of), whether it is a system
 * object, whether a .gnu_debuglink name's places hold no file
 * (links_absent, linked_ok); may_name's answers that hold for a whole
 * object (the any memo).  Not the frames read with them (symname.c) nor
 * the verdict keys built from them (symverdict.c).
 */
#include <dlfcn.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

/* The debug strings of elfmod.c's objects, by slot. */
struct dstr own_str[MC_ELFMOD_SLOTS];

/* own_key's answers, by slot (struct own_key) */
static struct own_key own_keys[MC_ELFMOD_SLOTS];

static struct qkey *qkeys;    /* [QKEYS], mc_map'd at first use */
static size_t nqkeys;

/* For suppcache.c's verdicts: whether the places of a .gnu_debuglink
 * name are without a file, by (object's path, name), a session's last
 * few (links_absent).  Cleared with the qkeys. */
#define LINK_MEMO 8
static struct { uint64_t h; bool absent; } link_memo[LINK_MEMO];
static unsigned link_memo_n;

/* may_name's answers that hold for every address of an object (kept
 * under MC_SYMCACHE_ANY, or dstr_has's anywhere), by its quick key and
 * the string's bytes: a region's records ask each entry's names of each
 * deep frame, most of those in one object, and each answer cost a
 * look-up of symcache.c's index (the string's sum, two probes).  Cleared
 * with the qkeys (end_session). */
static struct any_memo any_memo[ANY_SLOTS];
unsigned any_used;

/* What the objects' keys hold, forgotten: at a session's end (links:
 * the link memo too) and in a forked child. */
void keys_forget(bool links)
{
	memset(own_str, 0, sizeof own_str);
	memset(own_keys, 0, sizeof own_keys);
	nqkeys = 0;
	if (links)
		link_memo_n = 0;
	any_clear();
}

/* elfmod.c's reading of the object at addr, NULL: libdw's. */
struct mc_elfmod *own_module(uintptr_t addr)
{
	int fresh;
	struct mc_elfmod *m = mc_elfmod_find(addr, &fresh);
	if (fresh >= 0) {
		dstr_forget(&own_str[fresh]);
		own_keys[fresh] = (struct own_key){ 0 };
	}
	return m;
}

static void key_take(const struct mc_elf_sec *sec, void *arg)
{
	struct own_key *k = arg;
	const char *name = sec->name;
	bool in_file = sec->data && sec->type != SHT_NOBITS;
	size_t len = strlen(name);
	k->symtabs += sec->type == SHT_SYMTAB;
	k->info |= in_file && strcmp(name, ".debug_info") == 0;
	k->line |= in_file && strcmp(name, ".debug_line") == 0;
	k->elsewhere |= strcmp(name, ".gnu_debugaltlink") == 0 || strcmp(name, ".debug_sup") == 0 ||
			strcmp(name, ".debug_addr") == 0 ||
			(len > 4 && strcmp(name + len - 4, ".dwo") == 0);
}

/* m's key in symcache.c's files, NULL: not to be cached. */
const struct own_key *own_key(const struct mc_elfmod *m)
{
	struct own_key *k = &own_keys[mc_elfmod_slot(m)];
	if (!k->checked) {
		*k = (struct own_key){ .checked = true };
		const unsigned char *id = mc_elfmod_build_id(m, &k->idlen);
		k->ok = mc_elfmod_debuginfo(m) == MC_DI_OWN && id && k->idlen >= 8 &&
			k->idlen <= sizeof k->id && mc_elfmod_sections(m, key_take, k) && k->info &&
			k->line && !k->elsewhere && k->symtabs == 1;
		if (k->ok)
			memcpy(k->id, id, k->idlen);
	}
	return k->ok ? k : NULL;
}

/* An address in the system's libraries (/usr/lib, /lib): with
 * MEMCHECK_SYMBOLIZE_SYSTEM=0 their DWARF, large where it is installed
 * (libc's takes ~40 ms to load), is left alone; their symbol tables'
 * names, which suppression files match, are still read. */
bool in_system_object(uintptr_t addr)
{
	const char *name = NULL;
	if (!addr || !mc_object_base((void *)addr, &name) || !name)
		return false;
	if (!name[0]) {
		/* the main program: dladdr names it by argv[0] */
		Dl_info info;
		if (!dladdr((void *)addr, &info) || !info.dli_fname)
			return false;
		name = info.dli_fname;
	}
	return strncmp(name, "/usr/lib/", 9) == 0 || strncmp(name, "/lib/", 5) == 0 ||
	       strncmp(name, "/lib64/", 7) == 0;
}

struct qkey *qkey_of(uintptr_t addr)
{
	for (size_t i = 0; i < nqkeys; i++)
		if (addr >= qkeys[i].k.lo && addr < qkeys[i].k.hi)
			return qkeys[i].ok ? &qkeys[i] : NULL;
	if (!qkeys && !(qkeys = mc_map(QKEYS * sizeof *qkeys)))
		return NULL;
	if (nqkeys == QKEYS)
		return NULL;
	struct qkey *e = &qkeys[nqkeys];
	e->ok = mc_elfmod_quick_key(addr, &e->k);
	e->sys = -1;
	e->keep = -1;
	e->linked = -1;
	e->absent_len = 0;
	e->vpart = false;
	if (e->k.hi > e->k.lo)
		nqkeys++;   /* its range known: not asked again */
	return e->ok ? e : NULL;
}

bool linked_ok(struct qkey *q)
{
	if (q->linked < 0) {
		const char *link = mc_symcache_link_get(q->k.key, q->k.len);
		q->linked = link && links_absent(q->k.path, link);
	}
	return q->linked;
}

/* The MC_DI_* a key file's record's line gives, -1: none (damaged, or
 * linked and the link's places hold a file now). */
int quick_line(struct qkey *q, int32_t line)
{
	if (line & QUICK_LINKED) {
		if (!linked_ok(q))
			return -1;
		line &= ~QUICK_LINKED;
	}
	return line >= MC_DI_NONE && line <= MC_DI_ELSEWHERE ? line : -1;
}

/* Which of q's two files likelier holds its quick frames: the quick
 * key's (true) or its build ID's.  Where a build-ID debug file is, the
 * object's table is its (the quick key's); an object in the system's
 * own directories is a package's, stripped (Debian's policy): its names
 * are its dynamic table's, kept under the quick key too, where its
 * build ID's file, which only an object with DWARF of its own has
 * (own_key), was opened first: a failed openat at every warm measured
 * /bin/date's exit.  Either order finds the same record. */
bool key_file_first(const struct qkey *q)
{
	static const char *const dirs[] = { "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/" };
	if (q->k.debug)
		return true;
	for (size_t i = 0; i < MC_ARRAY_SIZE(dirs); i++)
		if (strncmp(q->k.path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

struct any_memo *any_slot(const struct qkey *q, const char *s, size_t len)
{
	uint8_t qi = (uint8_t)(q - qkeys + 1);
	size_t h = ((size_t)qi * 0x9e37u + len * 31u + (unsigned char)s[0] * 7u +
		    (unsigned char)s[len - 1]) & (ANY_SLOTS - 1);
	struct any_memo *e;
	while ((e = &any_memo[h])->q &&
	       (e->q != qi || e->len != len || memcmp(e->s, s, len) != 0))
		h = (h + 1) & (ANY_SLOTS - 1);
	return e;
}

void any_put(const struct qkey *q, const char *s, size_t len, bool found)
{
	if (!q || !len || len > ANY_LEN || 2 * (any_used + 1) > ANY_SLOTS)
		return;
	struct any_memo *e = any_slot(q, s, len);
	if (e->q)
		return;
	e->q = (uint8_t)(q - qkeys + 1);
	e->len = (uint8_t)len;
	e->found = found;
	memcpy(e->s, s, len);
	any_used++;
}

void any_clear(void)
{
	if (any_used)
		memset(any_memo, 0, sizeof any_memo);
	any_used = 0;
}

/* The places a .gnu_debuglink name is looked for beside path, each
 * without a file (what the writer's elfmod.c reading found: a file
 * there and it declines the object, own_module NULL), asked once a
 * session for each (object, name): a memo of the last few. */

bool links_absent(const char *path, const char *link)
{
	uint64_t h = mc_fnv1a(path, strlen(path)) ^ (mc_fnv1a(link, strlen(link)) * 31);
	for (unsigned i = 0; i < link_memo_n && i < LINK_MEMO; i++)
		if (link_memo[i].h == h)
			return link_memo[i].absent;
	bool absent = !mc_debuglink_found(path, link);
	link_memo[link_memo_n++ % LINK_MEMO] = (typeof(link_memo[0])){ h, absent };
	return absent;
}
