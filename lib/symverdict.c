/*
 * symverdict.c - suppcache.c's verdict records: a stack's key (its
 * frames as (object, offset), each object's quick key and path), the
 * writer's check that an object's verdicts may be kept, the key's hash,
 * and a reader's look-up of it (each object's part hashed once a
 * session, a record's key compared part by part, its link places
 * checked).  Not the objects' keys themselves (symkeys.c).
 */
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

/* The links of the last record mc_symbolize_verdict_holds took, with
 * its objects: the next record of the same objects holds the same
 * bytes (a process's stacks share their objects), whose places were
 * looked at once this session already. */
static struct {
	struct qkey *objs[QKEYS];
	int nobj;
	uint32_t len;             /* 0: none */
	char b[512];
} links_memo;
/* The objects of the last stack mc_symbolize_verdict_stack keyed, tried
 * before the session's (qkey_of); forgotten with them. */
static struct qkey *vhint[QKEYS];
static int nvhint;

/* The verdicts' memos forgotten, with the session's objects. */
void verdict_forget(void)
{
	links_memo.len = 0;
	nvhint = 0;
}

/* The writer's side for q's object at addr: may its verdicts be kept
 * (its names its file's bytes, named by its build ID, and the states
 * the quick key and the link places give)?  *link: the debuglink name
 * the next process checks, "" where none is looked for. */
static bool vobj_check(struct qkey *q, uintptr_t addr, char *link, size_t cap)
{
	link[0] = 0;
	struct mc_elfmod *m = own_module(addr);
	size_t idlen;
	const unsigned char *id = m ? mc_elfmod_build_id(m, &idlen) : NULL;
	if (!id || idlen != q->k.idlen || memcmp(id, q->k.key, idlen) != 0 ||
	    mc_elfmod_bias(m) != q->k.bias || strcmp(mc_elfmod_path(m), q->k.path) != 0)
		return false;
	int di = mc_elfmod_debuginfo(m);
	/* A system object's DWARF is never read (its frames the symbol
	 * table's, never deep); an object without DWARF has its table's
	 * names alone; one with its own has them from its own file only
	 * where own_key says so (no dwz file, no split DWARF).  Anything
	 * else (a debug file's DWARF, dwz's alternate file): not kept. */
	if (!qkey_sys(q, addr) && di != MC_DI_NONE && !(di == MC_DI_OWN && own_key(m)))
		return false;
	/* The link whose places elfmod.c's reading looked at (pick_table
	 * looks unless the object has both its own table and its own
	 * DWARF, or a build-ID debug file of its ID was found: then the key
	 * holds that file's state, and neither pick_table nor libdw's
	 * callback looks at the link's places).  The C library with its
	 * debug package had its link's three places checked by every
	 * warm process (3 access calls of a measured suite_test 5's exit). */
	const char *l = mc_elfmod_link(m);
	if (l) {
		size_t len = strlen(l);
		if (len >= cap || !links_absent(q->k.path, l))
			return false;
		memcpy(link, l, len + 1);
	}
	return true;
}

/* vobj_check's answer, once an object a session (its link name kept) */
static bool vobj_keep(struct qkey *q, uintptr_t addr, const char **link)
{
	if (q->keep < 0)
		q->keep = vobj_check(q, addr, q->link, sizeof q->link);
	*link = q->link;
	return q->keep;
}

/* (the fixed-size copies inline: -fno-builtin made each a call, most of
 * a warm exit's look-ups) */
bool mc_symbolize_verdict_key(const uintptr_t *pcs, int n, struct mc_buf *a, struct mc_buf *links)
{
	if (!mc_opt.symbolize || n < 0 || n > MC_MAX_DEPTH)
		return false;
	/* written in place: the frames, then at most QKEYS objects */
	enum { MOST = 2 + MC_MAX_DEPTH * 9 + 1 + QKEYS * (1 + 64 + 2 + MC_ELFMOD_PATH),
	       LINKS = QKEYS * (2 + MC_ELFMOD_PATH + 2 + sizeof ((struct qkey *)0)->link) };
	char *w = mc_buf_room(a, MOST);
	char *lw = links ? mc_buf_room(links, LINKS) : NULL;
	if (!w || (links && !lw))
		return false;
	bool ok = true;
	struct qkey *objs[QKEYS];
	uintptr_t at[QKEYS];
	int nobj = 0;
	pthread_mutex_lock(&sym_lock);
	uint16_t n16 = (uint16_t)n;
	__builtin_memcpy(w, &n16, 2);
	w += 2;
	for (int i = 0; i < n; i++) {
		uintptr_t addr = pcs[i] ? pcs[i] - 1 : 0;
		struct qkey *q = NULL;
		unsigned char o = 0xff;
		uint64_t off = 0;
		if (addr) {
			/* the stack's objects so far first: a few, most
			 * frames in one of them */
			for (o = 0; o < nobj && !(addr >= objs[o]->k.lo && addr < objs[o]->k.hi); o++)
				;
			if (o < nobj) {
				q = objs[o];
			} else if (!(q = qkey_of(addr))) {
				ok = false;
				break;
			} else {
				for (o = 0; o < nobj && objs[o] != q; o++)
					;
				if (o == nobj) {
					objs[nobj] = q;
					at[nobj++] = addr;
				}
			}
			off = addr - q->k.bias;
		}
		*w++ = (char)o;
		__builtin_memcpy(w, &off, 8);
		w += 8;
	}
	/* whether a system object's DWARF is read */
	*w++ = (char)('0' + mc_opt.symbolize_system);
	for (int o = 0; o < nobj && ok; o++) {
		const struct mc_quick_key *k = &objs[o]->k;
		uint16_t plen = (uint16_t)strnlen(k->path, sizeof k->path);
		*w++ = (char)k->len;
		memcpy(w, k->key, k->len);
		w += k->len;
		__builtin_memcpy(w, &plen, 2);
		memcpy(w + 2, k->path, plen);
		w += 2 + plen;
		if (!links)
			continue;
		const char *link;
		ok = vobj_keep(objs[o], at[o], &link);
		uint16_t llen = (uint16_t)strlen(link);
		__builtin_memcpy(lw, &plen, 2);
		memcpy(lw + 2, k->path, plen);
		lw += 2 + plen;
		__builtin_memcpy(lw, &llen, 2);
		memcpy(lw + 2, link, llen);
		lw += 2 + llen;
	}
	pthread_mutex_unlock(&sym_lock);
	mc_buf_end(a, w);
	if (links)
		mc_buf_end(links, lw);
	return ok;
}

bool mc_symbolize_verdict_sound(const uintptr_t *pcs, int n)
{
	bool ok = true;
	pthread_mutex_lock(&sym_lock);
	for (int i = 0; i < n && ok; i++) {
		struct qkey *q = pcs[i] ? qkey_of(pcs[i] - 1) : NULL;
		ok = !q || mc_elfmod_names_keyed(&q->k);
	}
	pthread_mutex_unlock(&sym_lock);
	return ok;
}

/* The verdict key's hash (memcheck-cache(5)): its frames part (kind,
 * count, frames, MEMCHECK_SYMBOLIZE_SYSTEM) over whole words, then each
 * object's part, hashed the same way, folded in: a reader hashes its
 * stack's frames and takes each object's hash made once a session, where
 * it copied each object's key and path into every stack's key and
 * hashed all of it (~1,000 instructions a record of a measured
 * /bin/date's exit, 25 records). */
static uint64_t fold_hash(uint64_t h, uint64_t part)
{
	h = (h ^ part) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The length of the frames part of a key of n frames */
static size_t vframes_len(size_t n)
{
	return 1 + 2 + n * 9 + 1;
}

uint64_t mc_symbolize_verdict_hash(const char *key, size_t len)
{
	uint16_t n16;
	if (len < 3)
		return mc_symcache_hash(key, len);
	__builtin_memcpy(&n16, key + 1, 2);
	size_t at = vframes_len(n16);
	if (at > len)
		return mc_symcache_hash(key, len);
	uint64_t h = mc_symcache_hash(key, at);
	while (at < len) {
		size_t klen = (unsigned char)key[at];
		uint16_t plen;
		if (len - at < 1 + klen + 2)
			return fold_hash(h, mc_symcache_hash(key + at, len - at));
		__builtin_memcpy(&plen, key + at + 1 + klen, 2);
		size_t part = 1 + klen + 2 + plen;
		if (part > len - at)
			part = len - at;
		h = fold_hash(h, mc_symcache_hash(key + at, part));
		at += part;
	}
	return h;
}

/* q's part of a verdict key, hashed: once a session */
static void vpart_make(struct qkey *q)
{
	if (q->vpart)
		return;
	char b[1 + sizeof q->k.key + 2 + sizeof q->k.path];
	uint16_t plen = (uint16_t)strnlen(q->k.path, sizeof q->k.path);
	b[0] = (char)q->k.len;
	memcpy(b + 1, q->k.key, q->k.len);
	__builtin_memcpy(b + 1 + q->k.len, &plen, 2);
	memcpy(b + 1 + q->k.len + 2, q->k.path, plen);
	q->plen = plen;
	q->vpart_len = (uint32_t)(1 + q->k.len + 2 + plen);
	q->oid = mc_symcache_hash(b, q->vpart_len);
	q->vpart = true;
}

bool mc_symbolize_verdict_stack(int kind, const uintptr_t *pcs, int n,
				struct mc_verdict_stack *s)
{
	if (!mc_opt.symbolize || n < 0 || n > MC_MAX_DEPTH)
		return false;
	/* the previous stack's objects first: a process's stacks share
	 * them (the program, the C library), where each object new to a
	 * stack was a walk of the session's objects (qkey_of) */
	struct qkey **objs = (struct qkey **)s->objs;
	int nobj = 0;
	bool ok = true;
	char *w = s->frames;
	uint16_t n16 = (uint16_t)n;
	*w++ = (char)(kind & 7); /* a leak kind or MC_SUPP_POOL */
	__builtin_memcpy(w, &n16, 2);
	w += 2;
	pthread_mutex_lock(&sym_lock);
	for (int i = 0; i < n && ok; i++) {
		uintptr_t addr = pcs[i] ? pcs[i] - 1 : 0;
		unsigned char o = 0xff;
		uint64_t off = 0;
		if (addr) {
			for (o = 0; o < nobj && !(addr >= objs[o]->k.lo && addr < objs[o]->k.hi); o++)
				;
			if (o == nobj) {
				struct qkey *q = NULL;
				for (int h = 0; h < nvhint && !q; h++)
					if (addr >= vhint[h]->k.lo && addr < vhint[h]->k.hi)
						q = vhint[h];
				if (!q && !(q = qkey_of(addr))) {
					ok = false;
					break;
				}
				for (o = 0; o < nobj && objs[o] != q; o++)
					;
				if (o == nobj)
					objs[nobj++] = q;
			}
			off = addr - objs[o]->k.bias;
		}
		*w++ = (char)o;
		__builtin_memcpy(w, &off, 8);
		w += 8;
	}
	*w++ = (char)('0' + mc_opt.symbolize_system);
	s->flen = (size_t)(w - s->frames);
	uint64_t h = ok ? mc_symcache_hash(s->frames, s->flen) : 0;
	size_t len = s->flen;
	for (int o = 0; o < nobj && ok; o++) {
		vpart_make(objs[o]);
		h = fold_hash(h, objs[o]->oid);
		len += objs[o]->vpart_len;
	}
	if (ok) {
		memcpy(vhint, objs, (size_t)nobj * sizeof *objs);
		nvhint = nobj;
	}
	pthread_mutex_unlock(&sym_lock);
	s->nobj = ok ? nobj : 0;
	s->hash = h;
	s->len = len;
	return ok;
}

/* key[0, len) the bytes of s's key (each object's part compared with
 * its fields, not built)? */
static bool vkey_same(const struct mc_verdict_stack *s, const char *key, size_t len)
{
	if (len != s->len || memcmp(key, s->frames, s->flen) != 0)
		return false;
	size_t at = s->flen;
	for (int o = 0; o < s->nobj; o++) {
		const struct qkey *q = s->objs[o];
		const char *p = key + at;
		uint16_t plen;
		__builtin_memcpy(&plen, p + 1 + q->k.len, 2);
		if ((unsigned char)p[0] != q->k.len || memcmp(p + 1, q->k.key, q->k.len) != 0 ||
		    plen != q->plen || memcmp(p + 1 + q->k.len + 2, q->k.path, plen) != 0)
			return false;
		at += q->vpart_len;
	}
	return true;
}

/* links (as the writer's, one (path, name) an object of s, in order):
 * does every name's place still hold no file? */
static bool vlinks_hold(const struct mc_verdict_stack *s, const char *b, size_t len)
{
	char link[256];
	bool ok = true;
	int o = 0;
	for (size_t at = 0; ok && at < len; o++) {
		uint16_t plen, llen;
		struct qkey *q = o < s->nobj ? s->objs[o] : NULL;
		if (!q || len - at < 2 || (__builtin_memcpy(&plen, b + at, 2), plen != q->plen) ||
		    len - at - 2 < (size_t)plen + 2 || memcmp(q->k.path, b + at + 2, plen) != 0) {
			ok = false;
			break;
		}
		at += 2 + (size_t)plen;
		__builtin_memcpy(&llen, b + at, 2);
		at += 2;
		if (llen >= sizeof link || len - at < llen) {
			ok = false;
			break;
		}
		const char *l = b + at;
		at += llen;
		if (!llen || (q->absent_len == llen && memcmp(q->absent, l, llen) == 0))
			continue;   /* none looked for, or found absent this session */
		memcpy(link, l, llen);
		link[llen] = 0;
		ok = links_absent(q->k.path, link);
		if (ok) {
			memcpy(q->absent, l, llen);
			q->absent_len = llen;
		}
	}
	return ok && o == s->nobj;
}

bool mc_symbolize_verdict_holds(const struct mc_verdict_stack *s, const char *key, size_t len,
				const char *links, size_t llen)
{
	pthread_mutex_lock(&sym_lock);
	bool ok = vkey_same(s, key, len);
	if (ok && !(llen && llen == links_memo.len && s->nobj == links_memo.nobj &&
		    memcmp(s->objs, links_memo.objs, (size_t)s->nobj * sizeof *s->objs) == 0 &&
		    memcmp(links, links_memo.b, llen) == 0)) {
		ok = vlinks_hold(s, links, llen);
		if (ok && llen <= sizeof links_memo.b) {
			memcpy(links_memo.objs, s->objs, (size_t)s->nobj * sizeof *s->objs);
			links_memo.nobj = s->nobj;
			memcpy(links_memo.b, links, llen);
			links_memo.len = (uint32_t)llen;
		}
	}
	pthread_mutex_unlock(&sym_lock);
	return ok;
}
