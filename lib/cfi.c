/*
 * cfi.c - how to step from a function to its caller at a return address,
 * read from the DWARF call-frame information (.eh_frame) that x86-64
 * objects carry for exceptions and debuggers, frame pointers or not.
 *
 * stacks.c walks frame pointers; code built without them (Debian's
 * libraries: strdup, setlocale, fopen, getline ...) keeps whatever it
 * likes in rbp, and a walk through it loses the program's frames.  For
 * a return address in such code mc_cfi_rule() gives the rule its CFI
 * states at the call: the caller's stack pointer (the canonical frame
 * address, CFA) as rsp or rbp plus an offset, the return address at
 * CFA-8, and where the function saved its caller's rbp, if it has.
 * stacks.c keeps the answer per return address, so this runs once for
 * each.
 *
 * Traps that shaped it:
 *  - It runs inside malloc: no malloc, and no lock the program may hold.
 *    dl_iterate_phdr takes the loader's lock; glibc's _dl_find_object
 *    (2.35) takes none and hands over the object's .eh_frame_hdr, whose
 *    sorted table finds the function's FDE by binary search.
 *  - A return address is the instruction after the call, and a call to
 *    a function that does not return can be its function's last
 *    instruction: the call's row is the one that holds ret - 1.
 *  - DW_CFA_remember_state saves the CFA rule too (gcc's epilogues in
 *    mid-function rely on it, as libgcc's unwinder does).
 *  - Only rules the walk can apply from rsp and rbp alone are given: a
 *    CFA from an expression or another register (the PLT, stack
 *    realignment) or a register rule other than "saved at CFA+n" give
 *    MC_CFI_UNKNOWN, and stacks.c then follows the frame pointer, as it
 *    did for everything before there was CFI.  One expression is read:
 *    the signal frame's (MC_CFI_SIGNAL, signal_rule), where a handler
 *    returns to the C library's __restore_rt and the interrupted
 *    registers lie in the kernel's ucontext at the stack pointer.  A
 *    handler's block was otherwise walked by the interrupted rbp, which
 *    code without frame pointers keeps anything in: valgrind shows the
 *    handler, the signal return, then the interrupted function and its
 *    callers (__pthread_kill_implementation, the caller of raise,
 *    main), memcheck jumped from the signal return to main, and a
 *    suppression valgrind wrote for the block missed it.
 *  - Every read is checked against the object's mapping, whose bounds
 *    _dl_find_object gives: a table that points outside it gives no
 *    rule.  (Inside, only the holes between an object's segments are
 *    not readable, and no linker's table points there.)  fuzz/fuzz_cfi.c
 *    feeds the parser arbitrary bytes under ASan and UBSan.
 *  - Where the RSS figures are measured, the tables are read in
 *    memcheck's own read-only mapping of the object's file (ownread.c),
 *    bounded by the segment that holds .eh_frame_hdr (every linker puts
 *    .eh_frame there too), at a delta from the program's addresses: the
 *    program's mappings then fault exactly as without memcheck.  A read
 *    (struct cur) carries the delta, so a pc-relative value is computed
 *    at its field's address in the program, and the table's datarel
 *    base is .eh_frame_hdr's address there.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include <dwarf.h>

#include "internal.h"

#if defined(__x86_64__) && defined(__GLIBC__) &&                               \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define HAVE_CFI 1
#endif

#ifdef HAVE_CFI

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* A reader over [p, end): a read past end sets bad and yields 0.
 * delta: p's address less the program's address of the same byte, where
 * the bytes are read in memcheck's own view of the object's file
 * (ownread.c), 0 in the program's mapping: a pc-relative value is the
 * program's address of its field plus the offset. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
	uintptr_t delta;
};

/* n is 1, 2, 4 or 8 at every call: inlined, each read is one load.
 * (The library is built with -fno-builtin, so a plain memcpy of n bytes
 * was a call into the C library's, 1,900 of them a /bin/date.) */
static inline __attribute__((always_inline)) uint64_t get(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	uint64_t v = 0;
	switch (n) { /* little-endian */
	case 1: v = *c->p; break;
	case 2: { uint16_t x; __builtin_memcpy(&x, c->p, 2); v = x; break; }
	case 4: { uint32_t x; __builtin_memcpy(&x, c->p, 4); v = x; break; }
	default: __builtin_memcpy(&v, c->p, 8); break;
	}
	c->p += n;
	return v;
}

static uint64_t uleb_long(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b = (uint8_t)get(c, 1);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80) || c->bad)
			return v;
	}
	c->bad = true;
	return 0;
}

/* Nearly every operand in .eh_frame is one byte: that case inline. */
static inline uint64_t uleb(struct cur *c)
{
	if (likely(!c->bad && c->p < c->end && !(*c->p & 0x80)))
		return *c->p++;
	return uleb_long(c);
}

static int64_t sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = (uint8_t)get(c, 1);
		if (c->bad || shift >= 64) {
			c->bad = true;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer in encoding enc (DW_EH_PE_*); datarel is the base of
 * DW_EH_PE_datarel (the .eh_frame_hdr's start), 0 where it is not
 * allowed.  Indirect pointers are only skipped, never followed. */
static uintptr_t read_ptr(struct cur *c, uint8_t enc, uintptr_t datarel)
{
	uintptr_t at = (uintptr_t)c->p - c->delta, v;
	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: v = (uintptr_t)get(c, 8); break;
	case DW_EH_PE_uleb128: v = (uintptr_t)uleb(c); break;
	case DW_EH_PE_udata2: v = (uintptr_t)get(c, 2); break;
	case DW_EH_PE_udata4: v = (uintptr_t)get(c, 4); break;
	case DW_EH_PE_udata8: v = (uintptr_t)get(c, 8); break;
	case DW_EH_PE_sleb128: v = (uintptr_t)sleb(c); break;
	case DW_EH_PE_sdata2: v = (uintptr_t)(int64_t)(int16_t)get(c, 2); break;
	case DW_EH_PE_sdata4: v = (uintptr_t)(int64_t)(int32_t)get(c, 4); break;
	case DW_EH_PE_sdata8: v = (uintptr_t)get(c, 8); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: v += at; break;
	case DW_EH_PE_datarel:
		if (!datarel)
			c->bad = true;
		v += datarel;
		break;
	default: c->bad = true; /* textrel, funcrel, aligned: not on x86-64 */
	}
	return v;
}

/* read_ptr() for the encodings every x86-64 linker and assembler
 * writes (a 4-byte offset from the field or from .eh_frame_hdr, a
 * 4-byte count or length, signed or not), inline: the general one, a
 * call, is ~32 instructions, and a rule read took four. */
static inline __attribute__((always_inline)) uintptr_t read_ptr4(struct cur *c, uint8_t enc,
								  uintptr_t datarel)
{
	if (!c->bad && c->end - c->p >= 4) {
		int32_t x;
		if (enc == (DW_EH_PE_pcrel | DW_EH_PE_sdata4)) {
			__builtin_memcpy(&x, c->p, 4);
			uintptr_t at = (uintptr_t)c->p - c->delta;
			c->p += 4;
			return at + (uintptr_t)(intptr_t)x;
		}
		if (enc == DW_EH_PE_udata4 || enc == DW_EH_PE_sdata4 ||
		    (enc == (DW_EH_PE_datarel | DW_EH_PE_sdata4) && datarel)) {
			__builtin_memcpy(&x, c->p, 4);
			c->p += 4;
			return enc == DW_EH_PE_udata4	? (uintptr_t)(uint32_t)x
			       : enc == DW_EH_PE_sdata4 ? (uintptr_t)(intptr_t)x
							: datarel + (uintptr_t)(intptr_t)x;
		}
	}
	return read_ptr(c, enc, datarel);
}

/* What a CIE says about the FDEs that use it. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	uint8_t fde_enc;
	bool z, signal;
	struct cur insns; /* its initial instructions */
};

/* The entry at p: its contents, after the length, in *body (read at
 * delta).  A zero length ends the section. */
static bool entry(const uint8_t *p, const uint8_t *end, uintptr_t delta, struct cur *body)
{
	struct cur c = { p, end, false, 0 };
	uint64_t len = get(&c, 4);
	if (len == 0xffffffff)
		len = get(&c, 8);
	if (c.bad || len == 0 || len > (uint64_t)(end - c.p))
		return false;
	*body = (struct cur){ c.p, c.p + len, false, delta };
	return true;
}

static bool parse_cie(const uint8_t *p, const uint8_t *end, uintptr_t delta, struct cie *ci)
{
	struct cur c;
	if (!entry(p, end, delta, &c) || get(&c, 4) != 0) /* CIE id 0 in .eh_frame */
		return false;
	uint8_t version = (uint8_t)get(&c, 1);
	const char *aug = (const char *)c.p;
	size_t alen = strnlen(aug, (size_t)(c.end - c.p));
	if (alen == (size_t)(c.end - c.p) || (version != 1 && version != 3))
		return false;
	c.p += alen + 1;
	memset(ci, 0, sizeof *ci);
	ci->fde_enc = DW_EH_PE_absptr;
	ci->code_align = uleb(&c);
	ci->data_align = sleb(&c);
	ci->ra = version == 1 ? get(&c, 1) : uleb(&c);
	if (aug[0] == 'z') {
		ci->z = true;
		uint64_t n = uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return false;
		struct cur a = { c.p, c.p + n, false, 0 };
		c.p += n;
		for (const char *s = aug + 1; *s; s++) {
			if (*s == 'R')
				ci->fde_enc = (uint8_t)get(&a, 1);
			else if (*s == 'P')
				read_ptr(&a, (uint8_t)get(&a, 1) & 0x7f, 1); /* skipped */
			else if (*s == 'L')
				get(&a, 1);
			else if (*s == 'S')
				ci->signal = true;
			else
				break; /* the rest of the data is known by its length */
		}
		if (a.bad)
			return false;
	} else if (aug[0]) {
		return false; /* "eh" and other pre-'z' augmentations */
	}
	ci->insns = c;
	return !c.bad;
}

/* A factored offset: v times the CIE's alignment, wrapping as a
 * corrupt table may ask (the rules then fail their range checks). */
static int64_t scaled(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* The rules of a row: the CFA's, rbp's and the return address's.
 * R_AT_SP: saved at the address rsp + off (DW_CFA_expression
 * DW_OP_breg7 off), as the C library's signal frame says where the
 * interrupted registers lie in the kernel's ucontext.  cfa_expr:
 * CFA_DEREF_SP, the CFA loaded from rsp + expr_off (DW_OP_breg7
 * expr_off, DW_OP_deref: the interrupted rsp there), any other
 * expression CFA_EXPR. */
enum { R_SAME, R_UNDEF, R_OFFSET, R_OTHER, R_AT_SP };
enum { CFA_REG, CFA_EXPR, CFA_DEREF_SP };
struct reg {
	uint8_t how;
	int64_t off;
};
struct row {
	uint8_t cfa_reg;
	uint8_t cfa_expr;
	int64_t cfa_off, expr_off;
	struct reg bp, ra;
};

/* The operands of an expression instruction at c (DW_CFA_expression,
 * DW_CFA_val_expression: a register's rule, its number in *reg, the rule
 * in *rule; DW_CFA_def_cfa_expression: the CFA's, in r), consumed.  One
 * shape is understood, the signal frame's: DW_OP_breg7 off (rsp + off),
 * with DW_OP_deref after it (the word there) for the CFA.  False on a
 * read past the end.  Out of line: only signal frames and the PLT have
 * expressions, and run() is on every rule read's path. */
static __attribute__((noinline, cold)) bool expr_op(struct cur *c, uint8_t op, struct row *r,
						      uint64_t *reg, struct reg *rule)
{
	if (op != DW_CFA_def_cfa_expression)
		*reg = uleb(c);
	uint64_t n = uleb(c);
	if (c->bad || n > (uint64_t)(c->end - c->p))
		return false;
	struct cur e = { c->p, c->p + n, false, 0 };
	c->p += n;
	int64_t off = 0;
	int form = 0; /* 1: DW_OP_breg7 off; 2: and DW_OP_deref */
	if (get(&e, 1) == DW_OP_breg7) {
		off = sleb(&e);
		if (!e.bad && e.p == e.end)
			form = 1;
		else if (!e.bad && e.end - e.p == 1 && *e.p == DW_OP_deref)
			form = 2;
	}
	if (op == DW_CFA_def_cfa_expression) {
		r->cfa_expr = form == 2 ? CFA_DEREF_SP : CFA_EXPR;
		r->expr_off = off;
	} else if (form == 1 && op == DW_CFA_expression) {
		*rule = (struct reg){ R_AT_SP, off };
	}
	return true;
}

#define STATE_DEPTH 8

/* Run the instructions in c from location loc until the row that holds
 * target; initial is the row the CIE's instructions made (for
 * DW_CFA_restore), NULL while running those.  *moved is set where an
 * instruction moves the location (the row then depends on loc and
 * target).  False on anything not understood. */
static bool run(struct cur c, const struct cie *ci, uintptr_t loc, uintptr_t target,
		struct row *r, const struct row *initial, bool *moved)
{
	struct row saved[STATE_DEPTH];
	int depth = 0;
	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)get(&c, 1);
		uint64_t reg = op & 0x3f, delta = 0;
		struct reg rule = { R_OTHER, 0 };
		bool set = false;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = reg;
			goto advance;
		case DW_CFA_offset:
			rule = (struct reg){ R_OFFSET, scaled(uleb(&c), ci->data_align) };
			set = true;
			break;
		case DW_CFA_restore:
			rule = initial ? (reg == REG_RBP ? initial->bp : initial->ra)
				       : (struct reg){ R_SAME, 0 };
			set = true;
			break;
		default:
			switch (op) {
			case DW_CFA_nop:
				break;
			case DW_CFA_set_loc:
				*moved = true;
				loc = read_ptr(&c, ci->fde_enc, 0);
				if (loc > target)
					return !c.bad;
				break;
			case DW_CFA_advance_loc1: delta = get(&c, 1); goto advance;
			case DW_CFA_advance_loc2: delta = get(&c, 2); goto advance;
			case DW_CFA_advance_loc4: delta = get(&c, 4); goto advance;
			case DW_CFA_offset_extended:
				reg = uleb(&c);
				rule = (struct reg){ R_OFFSET, scaled(uleb(&c), ci->data_align) };
				set = true;
				break;
			case DW_CFA_offset_extended_sf:
				reg = uleb(&c);
				rule = (struct reg){ R_OFFSET, scaled((uint64_t)sleb(&c), ci->data_align) };
				set = true;
				break;
			case DW_CFA_GNU_negative_offset_extended:
				reg = uleb(&c);
				rule = (struct reg){ R_OFFSET, scaled(0 - uleb(&c), ci->data_align) };
				set = true;
				break;
			case DW_CFA_restore_extended:
				reg = uleb(&c);
				rule = initial ? (reg == REG_RBP ? initial->bp : initial->ra)
					       : (struct reg){ R_SAME, 0 };
				set = true;
				break;
			case DW_CFA_undefined:
				reg = uleb(&c);
				rule = (struct reg){ R_UNDEF, 0 };
				set = true;
				break;
			case DW_CFA_same_value:
				reg = uleb(&c);
				rule = (struct reg){ R_SAME, 0 };
				set = true;
				break;
			case DW_CFA_register:
				reg = uleb(&c);
				uleb(&c);
				set = true;
				break;
			case DW_CFA_val_offset:
				reg = uleb(&c);
				uleb(&c);
				set = true;
				break;
			case DW_CFA_val_offset_sf:
				reg = uleb(&c);
				sleb(&c);
				set = true;
				break;
			case DW_CFA_expression:
			case DW_CFA_val_expression:
				if (!expr_op(&c, op, r, &reg, &rule))
					return false;
				set = true;
				break;
			case DW_CFA_remember_state:
				if (depth == STATE_DEPTH)
					return false;
				saved[depth++] = *r;
				break;
			case DW_CFA_restore_state:
				if (depth == 0)
					return false;
				*r = saved[--depth];
				break;
			case DW_CFA_def_cfa:
				r->cfa_reg = (uint8_t)uleb(&c);
				r->cfa_off = (int64_t)uleb(&c);
				r->cfa_expr = CFA_REG;
				break;
			case DW_CFA_def_cfa_sf:
				r->cfa_reg = (uint8_t)uleb(&c);
				r->cfa_off = scaled((uint64_t)sleb(&c), ci->data_align);
				r->cfa_expr = CFA_REG;
				break;
			case DW_CFA_def_cfa_register:
				r->cfa_reg = (uint8_t)uleb(&c);
				r->cfa_expr = CFA_REG;
				break;
			case DW_CFA_def_cfa_offset:
				r->cfa_off = (int64_t)uleb(&c);
				break;
			case DW_CFA_def_cfa_offset_sf:
				r->cfa_off = scaled((uint64_t)sleb(&c), ci->data_align);
				break;
			case DW_CFA_def_cfa_expression:
				if (!expr_op(&c, op, r, &reg, &rule))
					return false;
				break;
			case DW_CFA_GNU_args_size:
				uleb(&c);
				break;
			default:
				return false;
			}
		}
		if (set) {
			if (reg == REG_RBP)
				r->bp = rule;
			else if (reg == ci->ra)
				r->ra = rule;
		}
		continue;
advance:
		*moved = true;
		loc += delta * ci->code_align;
		if (loc > target)
			return !c.bad;
	}
	return !c.bad;
}

/* The row that holds a return address, as the walk's rule over the pcs
 * [lo, lo + len) (len 0: none), and the count of dlclose calls begun
 * before it was read (objects.c): what mc_cfi_rule() keeps of the rules
 * it read last (rows_memo, below). */
struct rule_row {
	uintptr_t lo, len;
	unsigned long closes;
	struct mc_cfi_rule rule;
};

/* rec's pcs, those of them in [lo, hi) alone. */
static __attribute__((noinline)) void rows_clip(struct rule_row *rec, uintptr_t lo, uintptr_t hi)
{
	uintptr_t end = rec->len > UINTPTR_MAX - rec->lo ? UINTPTR_MAX : rec->lo + rec->len;
	if (rec->lo < lo)
		rec->lo = lo;
	if (end > hi)
		end = hi;
	rec->len = end > rec->lo ? end - rec->lo : 0;
}

/* run_fast()'s end at the row [from, to) that holds its target: rec
 * (the FDE's range) is the row's pcs in it. */
static inline int fast_row(struct rule_row *rec, uintptr_t from, uintptr_t to)
{
	rows_clip(rec, from, to);
	return 1;
}

/* run() for an FDE's instructions, faster on the few that gcc and the
 * assemblers' .cfi_* directives write for x86-64 (advance_loc,
 * def_cfa_offset, offset, restore, remember_state, restore_state,
 * def_cfa, def_cfa_register, advance_loc1, nop, each operand one
 * byte): ~50 instructions run before a return address in the C
 * library's functions, ~16 machine instructions each in run()'s
 * general decoding (~800 of a first rule read's ~1,700 for /bin/date).
 * 1 where it reached the row that holds target (or the program's end),
 * the row in *r; -1 on anything else (another instruction, an operand
 * of more than one byte, a read past the end, a code alignment not 1):
 * the caller runs run() from the start, which then decides, so every
 * answer is run()'s (unit_stacks: cfi_fast_run_is_run, over every FDE
 * of the C library). */
/* A ULEB128 of 1 to 4 bytes at *p, before end, for run_fast(); -1 on
 * any other (run() then reads it). */
static inline __attribute__((always_inline)) int64_t uleb4(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 28 && q < end; shift += 7) {
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			return (int64_t)v;
		}
	}
	return -1;
}

/* Its one-byte case inline: nearly every operand. */
#define ULEB4(p, end) ((p) < (end) && !(*(p) & 0x80) ? (int64_t)*(p)++ : uleb4(&(p), (end)))

static int run_fast(const uint8_t *p, const uint8_t *end, const struct cie *ci, uintptr_t loc,
		    uintptr_t target, struct row *r, const struct row *initial,
		    struct rule_row *rec)
{
	struct row saved[STATE_DEPTH];
	int depth = 0;
	if (ci->code_align != 1)
		return -1;
	while (p < end) {
		uint8_t op = *p++;
		uintptr_t d;
		if ((op & 0xc0) == DW_CFA_advance_loc) { /* the most common */
			d = op & 0x3f;
			goto advance;
		}
		if (op & 0x80) { /* DW_CFA_offset, DW_CFA_restore */
			uint8_t reg = op & 0x3f;
			struct reg rule;
			if (op < DW_CFA_restore) {
				int64_t v = ULEB4(p, end);
				if (v < 0)
					return -1;
				rule = (struct reg){ R_OFFSET, scaled((uint64_t)v, ci->data_align) };
			} else {
				rule = reg == REG_RBP ? initial->bp : initial->ra;
			}
			if (reg == REG_RBP)
				r->bp = rule;
			else if (reg == ci->ra)
				r->ra = rule;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_def_cfa_offset: {
			int64_t v = ULEB4(p, end);
			if (v < 0)
				return -1;
			r->cfa_off = v;
			break;
		}
		case DW_CFA_GNU_args_size:
			if (ULEB4(p, end) < 0)
				return -1;
			break;
		case DW_CFA_remember_state:
			if (depth == STATE_DEPTH)
				return -1;
			saved[depth++] = *r;
			break;
		case DW_CFA_restore_state:
			if (depth == 0)
				return -1;
			*r = saved[--depth];
			break;
		case DW_CFA_def_cfa: {
			int64_t rg = ULEB4(p, end), v = rg < 0 ? -1 : ULEB4(p, end);
			if (v < 0)
				return -1;
			r->cfa_reg = (uint8_t)rg;
			r->cfa_off = v;
			r->cfa_expr = CFA_REG;
			break;
		}
		case DW_CFA_def_cfa_register: {
			int64_t rg = ULEB4(p, end);
			if (rg < 0)
				return -1;
			r->cfa_reg = (uint8_t)rg;
			r->cfa_expr = CFA_REG;
			break;
		}
		case DW_CFA_advance_loc1:
			if (p == end)
				return -1;
			d = *p++;
			goto advance;
		case DW_CFA_advance_loc2: {
			if (end - p < 2)
				return -1;
			uint16_t d2;
			__builtin_memcpy(&d2, p, 2);
			p += 2;
			d = d2;
			goto advance;
		}
		default:
			return -1;
		}
		continue;
advance:
		if (loc + d > target)
			return fast_row(rec, loc, loc + d);
		loc += d;
	}
	return fast_row(rec, loc, UINTPTR_MAX);
}

/* The FDE that covers pc in the object whose .eh_frame_hdr is read at
 * hdr, in [lo, hi), at delta from the program's addresses (hdr - delta
 * is the table's base, which its offsets are from); NULL if none.  In
 * [*start, *next) the pcs that find the same FDE: from its function's
 * start in the table to the next one's (UINTPTR_MAX after the last). */
static const uint8_t *find_fde(uintptr_t pc, const uint8_t *hdr, uintptr_t lo, uintptr_t hi,
			       uintptr_t delta, uintptr_t *start_pc, uintptr_t *next)
{
	const uint8_t *end = (const uint8_t *)hi;
	uintptr_t base = (uintptr_t)hdr - delta;
	if ((uintptr_t)hdr < lo || (uintptr_t)hdr >= hi || hi - (uintptr_t)hdr < 4)
		return NULL;
	if (hdr[0] != 1)
		return NULL;
	struct cur c = { hdr + 4, end, false, delta };
	read_ptr4(&c, hdr[1], base); /* eh_frame_ptr */
	uint64_t n = read_ptr4(&c, hdr[2], base);
	/* The table: (initial location, FDE address) pairs of 4-byte
	 * offsets from hdr, sorted; every linker writes it so. */
	if (c.bad || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || n == 0 ||
	    n > (uint64_t)(end - c.p) / 8)
		return NULL;
	const uint8_t *table = c.p;
	size_t a = 0, b = (size_t)n; /* the last entry at or below pc, in [a, b) */
	while (b - a > 1) {
		size_t m = a + (b - a) / 2;
		int32_t at;
		__builtin_memcpy(&at, table + 8 * m, 4);
		if (base + (uintptr_t)(intptr_t)at <= pc)
			a = m;
		else
			b = m;
	}
	int32_t start, fde;
	__builtin_memcpy(&start, table + 8 * a, 4);
	__builtin_memcpy(&fde, table + 8 * a + 4, 4);
	if (base + (uintptr_t)(intptr_t)start > pc)
		return NULL;
	*start_pc = base + (uintptr_t)(intptr_t)start;
	*next = UINTPTR_MAX;
	if (a + 1 < n) {
		__builtin_memcpy(&start, table + 8 * (a + 1), 4);
		*next = base + (uintptr_t)(intptr_t)start;
	}
	uintptr_t f = (uintptr_t)hdr + (uintptr_t)(intptr_t)fde;
	return f >= lo && f < hi ? (const uint8_t *)f : NULL;
}

/* The CIEs read last and the rows their instructions make, with their
 * bytes, to know them again: an object's FDEs share a few CIEs (libc's
 * 3,000 FDEs, three), and each rule read parsed its CIE and ran its
 * instructions (~300 of the ~1,700 instructions of a rule read for
 * /bin/date).  The same bytes at the same address parse the same, so
 * they are compared, not trusted: code loaded where dlclose'd code was,
 * or a fuzzer's buffer, may hold another CIE there.  Kept only where
 * its instructions do not move the location (then the row is the
 * CIE's, whatever the FDE).  Several, for all threads: one per thread
 * (in TLS) missed 34 of cJSON_test's 85 rule reads, a stack's frames
 * alternating between the program's CIE and the C library's, each miss
 * ~560 instructions.  Rules are read outside any lock (stacks.c), so
 * the memo is taken with a try-lock: a thread that finds it taken (or
 * a signal handler's capture inside another's) parses the CIE itself,
 * never waits. */
#define CIE_KEEP 64
#define CIE_MEMO 8
static struct cie_memo {
	uintptr_t at;
	size_t len; /* the whole entry's bytes, its length too; 0: none kept */
	struct cie ci;
	struct row initial;
	uint64_t bytes[CIE_KEEP / 8];
} cie_memo[CIE_MEMO];
static unsigned cie_next;                     /* the slot to fill next */
static atomic_flag cie_lock = ATOMIC_FLAG_INIT;

static bool cie_take(void)
{
	return !atomic_flag_test_and_set_explicit(&cie_lock, memory_order_acquire);
}

static void cie_give(void)
{
	atomic_flag_clear_explicit(&cie_lock, memory_order_release);
}

/* The kept CIE's parse and row, where the CIE at at (its object mapped
 * below hi) is one of them. */
static bool cie_known(uintptr_t at, uintptr_t hi, struct cie *ci, struct row *initial)
{
	if (!cie_take())
		return false;
	bool found = false;
	for (int k = 0; k < CIE_MEMO && !found; k++) {
		const struct cie_memo *m = &cie_memo[k];
		size_t n = m->len;
		if (!n || m->at != at || n > hi - at)
			continue;
		const uint8_t *p = (const uint8_t *)at;
		size_t i = 0;
		for (; i + 8 <= n; i += 8) {
			uint64_t w;
			__builtin_memcpy(&w, p + i, 8);
			if (w != m->bytes[i / 8])
				break;
		}
		if (i + 8 <= n)
			break; /* at's bytes are not the kept ones: parse them */
		for (; i < n; i++)
			if (p[i] != ((const uint8_t *)m->bytes)[i])
				break;
		if (i < n)
			break;
		*ci = m->ci;
		*initial = m->initial;
		found = true;
	}
	cie_give();
	return found;
}

static void cie_keep(uintptr_t at, const struct cie *ci, const struct row *initial)
{
	size_t n = (size_t)((uintptr_t)ci->insns.end - at);
	if (n > CIE_KEEP || !cie_take())
		return;
	struct cie_memo *m = NULL;
	for (int k = 0; k < CIE_MEMO && !m; k++)
		if (cie_memo[k].at == at)
			m = &cie_memo[k]; /* other bytes at a known address: replaced */
	if (!m)
		m = &cie_memo[cie_next++ % CIE_MEMO];
	m->at = at;
	const uint8_t *p = (const uint8_t *)at;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) /* words: the library is built -fno-builtin */
		__builtin_memcpy(&m->bytes[i / 8], p + i, 8);
	for (; i < n; i++)
		((uint8_t *)m->bytes)[i] = p[i];
	m->ci = *ci;
	m->initial = *initial;
	m->len = n;
	cie_give();
}

/* The row of the FDE read at fde (in [lo, hi), at delta) for pc, into
 * *r; false if not known.  *rec: the pcs of that row, where the fast
 * interpreter found it; where pc lies past the FDE's range, the pcs
 * past it, which have no rule either; none (len 0) otherwise.  Out of
 * line: inlined in rule_in, 160 bytes more of the first blocks. */
static __attribute__((noinline)) bool row_at(uintptr_t pc, const uint8_t *fde, uintptr_t lo,
					     uintptr_t hi, uintptr_t delta, struct row *r,
					     bool *signal, bool fast, struct rule_row *rec)
{
	const uint8_t *end = (const uint8_t *)hi;
	struct cur c;
	if (!entry(fde, end, delta, &c))
		return false;
	const uint8_t *idp = c.p;
	uint32_t id = (uint32_t)get(&c, 4);
	uintptr_t cie_at = (uintptr_t)idp - id;
	struct cie ci;
	struct row initial;
	if (c.bad || id == 0 || cie_at < lo || cie_at >= hi)
		return false;
	bool kept = cie_known(cie_at, hi, &ci, &initial);
	if (!kept && !parse_cie((const uint8_t *)cie_at, end, delta, &ci))
		return false;
	uintptr_t begin = read_ptr4(&c, ci.fde_enc, 0);
	uintptr_t range = read_ptr4(&c, ci.fde_enc & 0x0f, 0);
	if (c.bad || pc < begin)
		return false;
	if (pc - begin >= range) {
		/* so is every pc past the FDE's range that finds it (up to
		 * the table's next function, rule_in) */
		rec->lo = begin + range;
		rec->len = rec->lo < begin ? 0 : UINTPTR_MAX - rec->lo;
		return false;
	}
	if (ci.z) {
		uint64_t n = uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return false;
		c.p += n;
	}
	bool moved = false;
	if (!kept) {
		*r = (struct row){ .cfa_reg = REG_RSP, .cfa_off = 8 };
		if (!run(ci.insns, &ci, begin, pc, r, NULL, &moved))
			return false;
		initial = *r;
		if (!moved)
			cie_keep(cie_at, &ci, &initial);
	}
	*r = initial;
	*signal = ci.signal;
	rec->lo = begin;
	rec->len = moved ? 0 : range; /* moved: the FDE's first row is pc's CIE row alone */
	if (fast && run_fast(c.p, c.end, &ci, begin, pc, r, &initial, rec) > 0)
		return true;
	rec->len = 0;
	*r = initial;
	moved = false;
	return run(c, &ci, begin, pc, r, &initial, &moved);
}

static void rule_in(uintptr_t ret, uintptr_t hdr, uintptr_t lo, uintptr_t hi, uintptr_t delta,
		    struct mc_cfi_rule *out, bool fast, struct rule_row *rec);

/* The main program's loaded segment [*lo, *hi) that holds p, where
 * bias (its link map's l_addr) is the main program's.  glibc 2.36's
 * _dl_find_object gives the main program's dlfo_map_start and _end as
 * its executable segment alone where the segments are aligned to more
 * than a page, and its .eh_frame_hdr lies in the read-only segment
 * after it: a program linked with -z max-page-size=16384 (libevent's
 * build) had no rule for any of its frames, and a stack through a
 * frame without a frame pointer stopped there (tests/prog/
 * plain_bigpage_stacks: leaf alone, where valgrind gives leaf, middle,
 * outer, main).  The linker puts .eh_frame in .eh_frame_hdr's segment,
 * so every read of a rule stays inside it.  Premise: the main
 * program's headers are where AT_PHDR says, its bias that address less
 * PT_PHDR's p_vaddr (no PT_PHDR: no segment); getauxval takes no lock
 * and does not allocate. */
static bool main_segment(uintptr_t p, uint64_t bias, uintptr_t *lo, uintptr_t *hi)
{
	size_t n;
	uintptr_t main_bias;
	const ElfW(Phdr) *ph = mc_main_phdrs(&n, &main_bias);
	if (!ph || main_bias != bias)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && p - (bias + ph[i].p_vaddr) < ph[i].p_memsz) {
			*lo = bias + ph[i].p_vaddr;
			*hi = *lo + ph[i].p_memsz;
			return true;
		}
	return false;
}

/* The rows that held the return addresses read last, so that another
 * return address in one of them is answered without asking for its
 * object, searching the table, its CIE and its FDE again: in code with
 * frame pointers the body of a function is one row (from its prologue
 * to its first epilogue), where all its calls return; code without CFI
 * (built with -fno-asynchronous-unwind-tables, as Jim Tcl's jimsh) lies
 * past an FDE's range, one row of no rule up to the next function's
 * (wren's processes read 444 return addresses' rules in 130 functions,
 * 203 reads with 8 rows kept; jimsh's 515 each missed).  A row's answer
 * stands for pcs in its FDE's range that lie below the table's next
 * function and in its object's mapping, which are the pcs whose look-up
 * finds that object and that FDE (the table sorted, as every linker
 * writes it), while those bytes are mapped there: kept with the count
 * of dlclose calls begun before the read (objects.c), and answered only
 * while it is the same (a dlclose that bypasses dlclose.c's wrapper,
 * the C library's own of its NSS and iconv modules, is not counted:
 * stacks.c's table of rules keeps the rules of unloaded code alike).
 * Taken with a try-lock, as the CIEs' memo. */
#define ROWS_MEMO 8
static struct rule_row rows_memo[ROWS_MEMO];
static unsigned rows_next;
static atomic_flag rows_lock = ATOMIC_FLAG_INIT;

static bool rows_known(uintptr_t pc, unsigned long closes, struct mc_cfi_rule *out)
{
	if (atomic_flag_test_and_set_explicit(&rows_lock, memory_order_acquire))
		return false;
	bool found = false;
	for (int k = 0; k < ROWS_MEMO && !found; k++)
		if (pc - rows_memo[k].lo < rows_memo[k].len && rows_memo[k].closes == closes) {
			*out = rows_memo[k].rule;
			found = true;
		}
	atomic_flag_clear_explicit(&rows_lock, memory_order_release);
	return found;
}

static void rows_keep(const struct rule_row *rec)
{
	if (rec->len && !atomic_flag_test_and_set_explicit(&rows_lock, memory_order_acquire)) {
		rows_memo[rows_next++ % ROWS_MEMO] = *rec;
		atomic_flag_clear_explicit(&rows_lock, memory_order_release);
	}
}

void mc_cfi_rule(uintptr_t ret, struct mc_cfi_rule *out)
{
	unsigned long closes = mc_objects_closes();
	if (rows_known(ret - 1, closes, out))
		return;
	struct rule_row rec = { 0, 0, closes, { MC_CFI_UNKNOWN, 0, 0 } };
	struct dl_find_object fo;
	if (mc_find_object((void *)(ret - 1), &fo) != 0 || !fo.dlfo_eh_frame) {
		*out = (struct mc_cfi_rule){ MC_CFI_UNKNOWN, 0, 0 };
		return;
	}
	uintptr_t lo = (uintptr_t)fo.dlfo_map_start, hi = (uintptr_t)fo.dlfo_map_end;
	uintptr_t hdr = (uintptr_t)fo.dlfo_eh_frame;
	/* Where the RSS figures are measured, the tables are read in a
	 * view of memcheck's own (ownread.c): read in the program's
	 * mapping, the pages they fault were either the program's (too
	 * high) or, recorded as memcheck's, pages the program reads later
	 * without a trace (too low).  Not measured (the defaults), the
	 * program's mapping: a view costs five system calls an object for
	 * figures nobody reads. */
	struct mc_own_view v;
	if (mc_own_read_recording() && fo.dlfo_link_map &&
	    mc_own_view(hdr, lo, fo.dlfo_link_map, &v)) {
		rule_in(ret, hdr, v.lo, v.hi, v.delta, out, true, &rec);
	} else {
		if ((hdr < lo || hdr >= hi) && fo.dlfo_link_map)
			main_segment(hdr, fo.dlfo_link_map->l_addr, &lo, &hi);
		rule_in(ret, hdr, lo, hi, 0, out, true, &rec);
	}
	/* the pcs this object's look-up answers */
	rows_clip(&rec, (uintptr_t)fo.dlfo_map_start, (uintptr_t)fo.dlfo_map_end);
	rec.rule = *out;
	rows_keep(&rec);
}

/* A signal frame's row (an 'S' CIE's: the C library's __restore_rt,
 * where a handler returns to, its FDE from the byte before it): the
 * interrupted rsp loaded from rsp + k, its rip saved at rsp + k + 8 and
 * its rbp at rsp + j, as the kernel's sigcontext lays them out (rsp is
 * the ucontext there): MC_CFI_SIGNAL, cfa_off k, rbp_off j.  Any other
 * row of a signal frame (another layout, another expression) stays
 * unknown, and the walk follows the frame pointer there as it did. */
static __attribute__((noinline, cold)) void signal_rule(const struct row *r,
							  struct mc_cfi_rule *out)
{
	if (r->cfa_expr != CFA_DEREF_SP || r->ra.how != R_AT_SP || r->bp.how != R_AT_SP ||
	    r->expr_off < 0 || r->expr_off > MC_CFI_SIGNAL_MAX || r->ra.off != r->expr_off + 8 ||
	    r->bp.off < 0 || r->bp.off > MC_CFI_SIGNAL_MAX || (r->expr_off & 7) || (r->bp.off & 7))
		return;
	out->kind = MC_CFI_SIGNAL;
	out->cfa_off = (int32_t)r->expr_off;
	out->rbp_off = (int32_t)r->bp.off;
}

/* The rule at ret, the object's .eh_frame_hdr at hdr, its bytes in [lo,
 * hi) (the program's addresses) read at delta from there; the pcs of
 * the row that holds it in *rec (len 0: none). */
static void rule_in(uintptr_t ret, uintptr_t hdr, uintptr_t lo, uintptr_t hi, uintptr_t delta,
		    struct mc_cfi_rule *out, bool fast, struct rule_row *rec)
{
	*out = (struct mc_cfi_rule){ MC_CFI_UNKNOWN, 0, 0 };
	uintptr_t pc = ret - 1, start = 0, next = 0;
	lo += delta;
	hi += delta;
	const uint8_t *fde =
		find_fde(pc, (const uint8_t *)(hdr + delta), lo, hi, delta, &start, &next);
	struct row r;
	bool signal = false;
	bool found = fde && row_at(pc, fde, lo, hi, delta, &r, &signal, fast, rec);
	rows_clip(rec, start, next);
	if (!found)
		return;
	if (signal) {
		signal_rule(&r, out);
		return;
	}
	if (r.ra.how == R_UNDEF) {
		out->kind = MC_CFI_END; /* _start, clone: the outermost frame */
		return;
	}
	if (r.ra.how != R_OFFSET || r.ra.off != -8 || r.cfa_expr ||
	    (r.cfa_reg != REG_RSP && r.cfa_reg != REG_RBP) || r.cfa_off < 8 ||
	    r.cfa_off > INT32_MAX || (r.bp.how != R_SAME && r.bp.how != R_OFFSET) ||
	    (r.bp.how == R_OFFSET && (r.bp.off >= -8 || r.bp.off < INT32_MIN)))
		return;
	if (r.cfa_reg == REG_RBP && r.cfa_off == 16 && r.bp.how == R_OFFSET && r.bp.off == -16) {
		out->kind = MC_CFI_FP;
		return;
	}
	out->kind = r.cfa_reg == REG_RSP ? MC_CFI_SP : MC_CFI_BP;
	out->cfa_off = (int32_t)r.cfa_off;
	out->rbp_off = r.bp.how == R_OFFSET ? (int32_t)r.bp.off : 0;
}

void mc_cfi_rule_in(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
		    struct mc_cfi_rule *out)
{
	struct rule_row rec = { 0, 0, 0, { MC_CFI_UNKNOWN, 0, 0 } };
	rule_in(ret, (uintptr_t)hdr, lo, hi, 0, out, true, &rec);
}

int mc_cfi_rule_in_general(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
			   struct mc_cfi_rule *out)
{
	struct rule_row rec = { 0, 0, 0, { MC_CFI_UNKNOWN, 0, 0 } };
	rule_in(ret, (uintptr_t)hdr, lo, hi, 0, out, false, &rec);
	return 1;
}

#else /* no _dl_find_object, or not x86-64: frame pointers only */

void mc_cfi_rule(uintptr_t ret, struct mc_cfi_rule *out)
{
	(void)ret;
	*out = (struct mc_cfi_rule){ MC_CFI_UNKNOWN, 0, 0 };
}

void mc_cfi_rule_in(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
		    struct mc_cfi_rule *out)
{
	(void)hdr;
	(void)lo;
	(void)hi;
	mc_cfi_rule(ret, out);
}

int mc_cfi_rule_in_general(uintptr_t ret, const void *hdr, uintptr_t lo, uintptr_t hi,
			   struct mc_cfi_rule *out)
{
	mc_cfi_rule_in(ret, hdr, lo, hi, out);
	return 0;
}

#endif
