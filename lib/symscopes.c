/*
 * symscopes.c - a printed frame's inlined calls: the scopes at its
 * address, from a table of its compile unit's top-level functions
 * (scopes_at) and, from a function's second lookup, a table of that
 * function's nested scopes (fn_table, fn_walk), libdw's getscopes where
 * those tables cannot follow; then each inlined call's name and call
 * site (resolve_inlines).  tests/unit_symbolize.c checks the tables
 * against libdw over a program's code.  Not the frame's own name and
 * line (symname.c).
 */
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "internal.h"
#include "symbolize.h"

/* A compile unit's top-level DIEs with addresses, by range (scopes_at):
 * the units of the printed frames, a few, the oldest replaced.  Like
 * mod_caches', its pages are touched only where a frame was printed
 * (fns_used, among the small variables, bounds end_session's walk). */
struct unit_fns {
	const void *unit;       /* the unit DIE's bytes (unique in a session) */
	bool usable;            /* false: imported units, or libdw failed */
	struct mc_buf buf;      /* struct cu_range[n], die the DIE's offset */
	size_t n;
};
#define UNIT_FNS 8
static struct unit_fns unit_fns[UNIT_FNS];
static unsigned fns_next, fns_used;

/* A top-level function's scopes (scopes_at), as a table built at its
 * second lookup: every DIE below it that libdw's walk could go into or
 * stop at, with its ranges.  The walk calls dwarf_haspc on each child
 * before the one that holds the address, level by level: in a large
 * C++ function (a gtest TestBody, thousands of inlined calls and call
 * sites) ~5,400 calls of ~1,000 instructions a frame, and the peak's
 * lines name many frames of one function (yaml-cpp's first run: 1,150
 * frames in 80 functions, 499 in one; 10.5 G instructions of its 14.6
 * G).  Built once, each lookup is a scan of the table. */
struct fn_node {
	Dwarf_Off die;
	uint32_t parent;        /* its parent's node + 1; 0: the top-level DIE */
	bool scopes;            /* may_have_scopes(its tag) */
};
struct fn_range {
	Dwarf_Addr start, end;
	uint32_t node;
};
struct fn_scopes {
	const void *unit;       /* the unit DIE's bytes; NULL: a free slot */
	Dwarf_Off top;          /* the top-level DIE's offset */
	bool built, usable;     /* usable: every DIE read without error */
	struct mc_buf nodes;    /* struct fn_node[], in DIE order */
	struct mc_buf ranges;   /* struct fn_range[] */
};
#define FN_SCOPES 32
static struct fn_scopes fn_scopes[FN_SCOPES];
static unsigned fsc_next, fsc_used;

void unit_fns_forget(void)
{
	for (unsigned i = 0; i < fns_used; i++) {
		mc_buf_free(&unit_fns[i].buf);
		unit_fns[i] = (struct unit_fns){ 0 };
	}
	fns_next = fns_used = 0;
	for (unsigned i = 0; i < fsc_used; i++) {
		mc_buf_free(&fn_scopes[i].nodes);
		mc_buf_free(&fn_scopes[i].ranges);
		fn_scopes[i] = (struct fn_scopes){ 0 };
	}
	fsc_next = fsc_used = 0;
}

/* The tables forgotten in a forked child: zeroed, not freed (the thread
 * that held the lock may have been building or freeing one: a stale
 * buffer's munmap in the child took away whatever was mapped there
 * since, forklocks' children crashed in the suppressions).  Their maps
 * stay, unused. */
void scopes_drop(void)
{
	memset(unit_fns, 0, sizeof unit_fns);
	fns_next = fns_used = 0;
	memset(fn_scopes, 0, sizeof fn_scopes);
	fsc_next = fsc_used = 0;
}

static const char *die_name(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	/* An inlined copy names its function through DW_AT_abstract_origin,
	 * which attr_integrate follows. */
	if (dw.attr_integrate(die, at, &a))
		return dw.formstring(&a);
	return NULL;
}

/* ---- the scopes at an address, without dwarf_getscopes -------------- */

/* dwarf_getscopes finds the scopes at an address by a walk of the whole
 * unit, dwarf_haspc on every top-level DIE (~0.5 M instructions a frame
 * in parson.c's unit), and for inlined code getscopes_die walks it again
 * for the concrete callers.  The walk takes, at each level, the first
 * DIE whose ranges hold the address and goes into it (if its tag may
 * hold scopes); so the top-level DIE it takes is, of those holding the
 * address, the first in the unit (the lowest offset), which a table of
 * the unit's top-level ranges, built once, finds by a binary search.
 * Below it the same walk is made, DIE by DIE, and the path it takes is
 * the concrete chain getscopes_die gives.  What the table cannot follow
 * as libdw does (imported units, which its walk enters; an error; a
 * split unit) is left to libdw. */
/* A DIE DWARF gives no address range (DWARF 5, appendix A: neither
 * DW_AT_low_pc nor DW_AT_ranges applies to its tag): a unit's types and
 * variables, most of its top-level DIEs, each a dwarf_ranges call of
 * ~660 instructions that found nothing (suite_test.c's unit: 73 calls,
 * 48 K instructions of a leaking suite_test 0's exit). */
static bool no_code(int tag)
{
	static const bool none[] = {
		[DW_TAG_base_type] = true, [DW_TAG_pointer_type] = true,
		[DW_TAG_reference_type] = true, [DW_TAG_rvalue_reference_type] = true,
		[DW_TAG_const_type] = true, [DW_TAG_volatile_type] = true,
		[DW_TAG_restrict_type] = true, [DW_TAG_typedef] = true, [DW_TAG_array_type] = true,
		[DW_TAG_subroutine_type] = true, [DW_TAG_enumeration_type] = true,
		[DW_TAG_variable] = true,
	};
	return tag >= 0 && (size_t)tag < MC_ARRAY_SIZE(none) && none[tag];
}

static void unit_fns_build(struct unit_fns *u, Dwarf_Die *cu)
{
	Dwarf_Die d;
	u->usable = true;
	int more = dw.child(cu, &d) == 0;
	while (more && u->usable) {
		int tag = dw.tag(&d);
		if (tag == DW_TAG_imported_unit) {
			u->usable = false;
			break;
		}
		Dwarf_Addr base, start, end;
		ptrdiff_t o = 0;
		while (!no_code(tag) && (o = dw.ranges(&d, o, &base, &start, &end)) > 0) {
			struct cu_range r = { start, end, end, dw.dieoffset(&d) };
			if (start < end)
				mc_buf_put(&u->buf, (const char *)&r, sizeof r);
		}
		int next = o < 0 ? -1 : dw.siblingof(&d, &d);
		u->usable = next >= 0;
		more = next == 0;
	}
	u->n = ranges_sort(&u->buf);
	u->usable = u->usable && !u->buf.oom;
}

/* The DIEs libdw's walk goes into when they hold the address (its
 * may_have_scopes, elfutils 0.188 libdw/libdw_visit_scopes.c). */
static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

#define SCOPES_MAX 32

/* The chain from path[0], a top-level DIE, down to the DIE holding a
 * that libdw's walk stops at: the first child that holds a, level by
 * level, into path; its length, or -1 to ask libdw. */
static int walk(Dwarf_Addr a, Dwarf_Die *path)
{
	int depth = 1;
	while (may_have_scopes(dw.tag(&path[depth - 1]))) {
		/* the first child that holds a, as libdw's walk takes it */
		Dwarf_Die *k = &path[depth];
		int more = depth < SCOPES_MAX ? dw.child(&path[depth - 1], k) : -1, in = 0;
		if (more < 0)
			return -1;
		while (more == 0) {
			if (dw.tag(k) == DW_TAG_imported_unit || (in = dw.haspc(k, a)) < 0)
				return -1;
			if (in)
				break;
			if ((more = dw.siblingof(k, k)) < 0)
				return -1;
		}
		if (!in)
			break;
		depth++;
	}
	return depth;
}

/* The slot of a ring of cap to fill next (*next claims so far, *used
 * of them in use), the oldest replaced once all are. */
static unsigned ring_claim(unsigned *next, unsigned *used, unsigned cap)
{
	if (*used < cap)
		++*used;
	return (*next)++ % cap;
}

/* The DIEs below die (node parent, its children at level) into f, as the walk would
 * meet them: each child with a range; the children of those that may
 * hold scopes, where the walk could still go down.  false where libdw
 * failed or an imported unit is met (the walk asks libdw there). */
static bool fn_visit(struct fn_scopes *f, Dwarf_Die *die, uint32_t parent, uint32_t level)
{
	Dwarf_Die k;
	int more = dw.child(die, &k);
	while (more == 0) {
		int tag = dw.tag(&k);
		if (tag == DW_TAG_imported_unit)
			return false;
		uint32_t node = (uint32_t)(f->nodes.len / sizeof(struct fn_node));
		Dwarf_Addr base, start, end;
		ptrdiff_t o = 0;
		bool any = false;
		while ((o = dw.ranges(&k, o, &base, &start, &end)) > 0)
			if (start < end) {
				struct fn_range r = { start, end, node };
				mc_buf_put(&f->ranges, (const char *)&r, sizeof r);
				any = true;
			}
		if (o < 0)
			return false;
		if (any) {
			struct fn_node n = { dw.dieoffset(&k), parent, may_have_scopes(tag) };
			mc_buf_put(&f->nodes, (const char *)&n, sizeof n);
			if (n.scopes && level + 1 < SCOPES_MAX && !fn_visit(f, &k, node + 1, level + 1))
				return false;
		}
		more = dw.siblingof(&k, &k);
	}
	return more > 0 && !f->nodes.oom && !f->ranges.oom;
}

/* The table of the top-level DIE top (read into die) of unit cu: NULL at
 * its first lookup (the walk is as cheap as building it once), built at
 * the second.  A few functions at a time, the oldest replaced. */
static struct fn_scopes *fn_table(Dwarf_Die *cu, Dwarf_Off top, Dwarf_Die *die)
{
	struct fn_scopes *f = NULL;
	for (unsigned i = 0; i < fsc_used && !f; i++)
		if (fn_scopes[i].unit == cu->addr && fn_scopes[i].top == top)
			f = &fn_scopes[i];
	if (!f) {
		f = &fn_scopes[ring_claim(&fsc_next, &fsc_used, FN_SCOPES)];
		mc_buf_free(&f->nodes);
		mc_buf_free(&f->ranges);
		*f = (struct fn_scopes){ .unit = cu->addr, .top = top };
		return NULL;
	}
	if (!f->built) {
		f->built = true;
		f->usable = fn_visit(f, die, 0, 1);
	}
	return f;
}

/* walk's chain from f's table: at each level, of the DIEs whose parent
 * is the last one taken and whose ranges hold a, the first in DIE
 * order (the lowest node). */
static int fn_walk(const struct fn_scopes *f, Dwarf *dbg, Dwarf_Addr a, Dwarf_Die *path)
{
	const struct fn_node *nodes = (const struct fn_node *)f->nodes.s;
	const struct fn_range *r = (const struct fn_range *)f->ranges.s;
	size_t nr = f->ranges.len / sizeof *r;
	uint32_t cur = 0;   /* the last node taken + 1; 0: the top-level DIE */
	int depth = 1;
	while (cur ? nodes[cur - 1].scopes : may_have_scopes(dw.tag(&path[0]))) {
		if (depth >= SCOPES_MAX)
			return -1;
		uint32_t best = UINT32_MAX;
		for (size_t i = 0; i < nr; i++)
			if (a - r[i].start < r[i].end - r[i].start && r[i].node < best &&
			    nodes[r[i].node].parent == cur)
				best = r[i].node;
		if (best == UINT32_MAX)
			break;
		if (!dw.offdie(dbg, nodes[best].die, &path[depth]))
			return -1;
		depth++;
		cur = best + 1;
	}
	return depth;
}

/* The scopes at a, an address in the unit cu, as resolve_inlines reads
 * them from getscopes and getscopes_die: from the innermost function
 * (inlined or not) out to the top-level DIE, into chain (cap at most);
 * how many, or -1 to ask libdw. */
static int scopes_at(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr a, Dwarf_Die *chain, int cap)
{
	if (!dw.fn_table || !cu->addr)
		return -1;
	struct unit_fns *u = NULL;
	for (unsigned i = 0; i < fns_used && !u; i++)
		if (unit_fns[i].unit == cu->addr)
			u = &unit_fns[i];
	if (!u) {
		u = &unit_fns[ring_claim(&fns_next, &fns_used, UNIT_FNS)];
		mc_buf_free(&u->buf);
		*u = (struct unit_fns){ .unit = cu->addr };
		unit_fns_build(u, cu);
	}
	if (!u->usable)
		return -1;
	const struct cu_range *r = (const struct cu_range *)u->buf.s;
	Dwarf_Off first = (Dwarf_Off)-1;
	for (size_t i = ranges_upto(r, u->n, a); i-- > 0 && r[i].maxend > a;)
		if (r[i].end > a && r[i].die < first)
			first = r[i].die;
	Dwarf_Addr bias;
	Dwarf *dbg = first != (Dwarf_Off)-1 ? dw.getdwarf(mod, &bias) : NULL;
	Dwarf_Die path[SCOPES_MAX];
	/* (the unit's own Dwarf, or getscopes is asked: split units) */
	if (!dbg || !dw.offdie(dbg, first, &path[0]) || path[0].cu != cu->cu)
		return -1;
	struct fn_scopes *f = fn_table(cu, first, &path[0]);
	int depth = f && f->usable ? fn_walk(f, dbg, a, path) : walk(a, path);
	if (depth < 0)
		return -1;
	/* getscopes_die's chain begins at the innermost function */
	int inner = depth;
	while (inner > 0 && dw.tag(&path[inner - 1]) != DW_TAG_inlined_subroutine &&
	       dw.tag(&path[inner - 1]) != DW_TAG_subprogram)
		inner--;
	if (!inner || inner > cap)
		return -1;
	for (int i = 0; i < inner; i++)
		chain[i] = path[inner - 1 - i];
	return inner;
}

/* The functions inlined at addr, innermost first: out[0] is the code the
 * address is in, out[1] the function that code was inlined into, and so
 * on up to the function that is really there.  out[0] already holds the
 * address's own file:line and object; each caller gets the line of the
 * inlined call.  cu is addr's compile unit when the caller found it
 * (with mod's bias), else NULL.  Returns how many frames out[] now holds
 * (at least 1). */
int resolve_inlines(Dwfl_Module *mod, uintptr_t addr, Dwarf_Die *cu, Dwarf_Addr bias,
			   struct mc_frame_info *out, int max)
{
	if (!dw.inlines)
		return 1;
	if (!cu)
		cu = dw.addrdie(mod, addr, &bias);
	Dwarf_Die *inner = NULL, *scopes = NULL, own[SCOPES_MAX];
	/* The scopes from the unit's table (scopes_at), or else libdw's. */
	int nown = cu ? scopes_at(mod, cu, addr - bias, own, SCOPES_MAX) : -1;
	int ninner = cu && nown < 0 ? dw.getscopes(cu, addr - bias, &inner) : 0;
	/* getscopes goes from the innermost scope through the inlined
	 * function's abstract definition; the concrete chain of callers
	 * comes from the scopes that contain that innermost function. */
	int first = 0;
	while (first < ninner && dw.tag(&inner[first]) != DW_TAG_inlined_subroutine &&
	       dw.tag(&inner[first]) != DW_TAG_subprogram)
		first++;
	/* Code not inlined (the innermost function a subprogram): the
	 * chain below needs that one scope, which getscopes_die would
	 * return first, after a walk of the whole unit to find it again
	 * (parson's 20 printed stacks: 22 M instructions of 44 M). */
	Dwarf_Die *chain = NULL;
	int nscopes = 0;
	if (nown >= 0) {
		chain = own;
		nscopes = nown;
	} else if (first < ninner && dw.tag(&inner[first]) == DW_TAG_subprogram) {
		chain = &inner[first];
		nscopes = 1;
	} else if (first < ninner) {
		nscopes = dw.getscopes_die(&inner[first], &scopes);
		chain = scopes;
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	char sym[sizeof out->linkage];  /* the symbol table's name at addr */
	copy(sym, sizeof sym, out->linkage);
	const char *call_file = NULL;
	int call_line = 0, n = 0;
	for (int i = 0; i < nscopes && n < max; i++) {
		int tag = dw.tag(&chain[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (n > 0) {
			/* A caller: same address and object, the inlined
			 * call's file:line. */
			out[n] = out[0];
			copy(out[n].file, sizeof out[n].file, call_file);
			out[n].line = call_file ? call_line : 0;
		}
		const char *name = die_name(&chain[i], DW_AT_name);
		/* The function really at addr is shown by its symbol's name
		 * too, as valgrind shows it (its names come from the symbol
		 * table; the debug information names inlined calls only):
		 * glibc's DW_AT_name is __getdelim, __re_compile_pattern
		 * where the table's preferred alias (symtab.c) is getdelim,
		 * re_compile_pattern; a cold part, lose.cold, where the
		 * DWARF says lose.  A C++ symbol is shown demangled from its
		 * linkage (demangle.c), and a Rust v0 one (_R...) memcheck
		 * cannot demangle: DW_AT_name stays their fallback. */
		bool by_sym = tag == DW_TAG_subprogram && sym[0] &&
			      !(sym[0] == '_' && (sym[1] == 'Z' || sym[1] == 'R'));
		if (by_sym || name)
			copy(out[n].function, sizeof out[n].function, by_sym ? sym : name);
		/* The function really at addr goes by its symbol's name, as
		 * valgrind names it: its DW_AT_linkage_name may be an alias
		 * the table does not prefer (a constructor's C2 where
		 * valgrind writes and matches C1).  An inlined call goes by
		 * its DW_AT_name alone, in valgrind's suppressions too: it
		 * writes fun:push_back and never matches the mangled
		 * _ZNSt6vectorIiSaIiEE9push_backERKi that memcheck wrote. */
		const char *lk = tag != DW_TAG_subprogram ? name :
				 sym[0] ? sym : die_name(&chain[i], DW_AT_linkage_name);
		copy(out[n].linkage, sizeof out[n].linkage, lk ? lk : "");
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		Dwarf_Attribute a;
		Dwarf_Word file = 0, line = 0;
		call_file = NULL;
		if (dw.attr(&chain[i], DW_AT_call_file, &a) && dw.formudata(&a, &file) == 0 &&
		    dw.attr(&chain[i], DW_AT_call_line, &a) && dw.formudata(&a, &line) == 0 &&
		    (files || dw.getsrcfiles(cu, &files, &nfiles) == 0) && file < nfiles) {
			call_file = dw.filesrc(files, file, NULL, NULL);
			call_line = (int)line;
		}
	}
	/* libdw's arrays, malloc'd with the guard held: freed where they
	 * came from (forward.c), not through the public free. */
	mc_forward_free(inner);
	mc_forward_free(scopes);
	return n ? n : 1;
}
