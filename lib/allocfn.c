/*
 * allocfn.c - allocation functions: the frames a site is named past.
 * Most C libraries allocate through a wrapper of their own (xmalloc,
 * jsonp_malloc, yaml_malloc, g_malloc); a stack's first frame is then the
 * wrapper's call of malloc, the same for every block, and a report that
 * names one site per stack (a leak's "allocated at", the OOM sweep's
 * failed call, a peak site, a generated suppression) would name the
 * wrapper every time.  A frame is an allocation function when
 *
 * - its function's name matches a pattern of MEMCHECK_ALLOC_FN (shell
 *   patterns, comma-separated, as valgrind's --alloc-fn names them), or
 * - MEMCHECK_ALLOC_FN_AUTO is on (the default) and the code at its return
 *   address hands the block it got straight back to its own caller: a
 *   thin wrapper.
 *
 * Only the frames at the start of a stack count (a wrapper, a wrapper of
 * it, ...); the site is the first frame past them.  Full stacks keep
 * every frame: the reports mark these (alloc_fn in JSON).
 *
 * Traps that shaped it:
 * - Names are not evidence.  A function called *_alloc or *_new may fill
 *   the block, link it into a list or keep it in a global; naming it
 *   past would hide the bug in it.  And a wrapper's shape in the source
 *   does not survive the compiler: at -O2 a thin wrapper tail-calls
 *   malloc and leaves no frame at all, so only frames that are there
 *   are judged, and only by their machine code.
 * - The evidence is the code after the call, decoded from the return
 *   address (x86-64; elsewhere only the patterns apply): along the path
 *   where the result is not NULL, nothing but moves of the result between
 *   registers and the function's own stack slots, stack adjustment, a
 *   NULL test (the NULL path, which aborts, logs or returns NULL, is not
 *   followed: no block is named there), jumps, no-ops and the return, with
 *   the result in rax.  Any other instruction (a store through the
 *   pointer, a store to a global, a call, arithmetic on the result) says
 *   the function does more than hand the block on: not a wrapper.  This
 *   judges each call site by itself: yaml_realloc's two calls (realloc,
 *   or malloc for a NULL pointer) both return the block; a constructor
 *   whose call of malloc is followed by stores into the block is never
 *   folded, however small.  Undecodable bytes mean "no".
 * - A function whose last act leaves the block in rax returns it only
 *   if its caller takes it: Unity's void test function
 *   `TEST_ASSERT_NOT_NULL(malloc(30));` at -O0 tests the block and
 *   returns with it still in rax, the shape of a checked wrapper, and its
 *   leak was named at the framework's call of the test.  So the
 *   function's own frame (not a function inlined in it, which hands its
 *   value on inside the frame) counts only where the code at its caller's
 *   return address reads rax before anything overwrites it (a move, a
 *   test, an address through it, a store of it); an overwrite (a move
 *   into eax/rax, a zeroing, a call: rax is no argument) says the value
 *   was not wanted, a return hands the question to the next caller.
 *   Undecodable code counts as a use: the verdict is then the code's
 *   alone, as before the caller was asked.
 * - Not on the hot path: judged when a report names a site, once per
 *   return address (a lock-free table of verdicts), never per malloc.
 * - The bytes read are the executable segment's of the object the return
 *   address lies in, never past it.
 */
#include <fnmatch.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

/* ---- MEMCHECK_ALLOC_FN ----------------------------------------------- */

bool mc_allocfn_named(const struct mc_frame_info *fi)
{
	const char *p = mc_opt.alloc_fn;
	while (p && *p) {
		while (*p == ',' || *p == ' ')
			p++;
		size_t len = strcspn(p, ", ");
		char pat[256];
		if (len && len < sizeof pat) {
			memcpy(pat, p, len);
			pat[len] = 0;
			if (fnmatch(pat, fi->function, 0) == 0 ||
			    (fi->linkage[0] && fnmatch(pat, fi->linkage, 0) == 0))
				return true;
		}
		p += len;
	}
	return false;
}

/* ---- thin wrappers (x86-64) ------------------------------------------ */

#if defined(__x86_64__)

enum { RAX = 0, RSP = 4, RBP = 5 };
#define MAX_SLOTS 8
#define MAX_STEPS 64   /* instructions along one path */
#define MAX_FORKS 8    /* conditional branches explored both ways */

/* What the decoded code knows at one point of one path. */
struct state {
	uint16_t regs;           /* bit r: register r holds the block */
	int64_t rsp;             /* rsp minus its value at the return address */
	bool rsp_known, rbp_known;
	bool null_test;          /* ZF is set exactly when the block is NULL */
	int nslots;
	struct { uint8_t base; int64_t off; bool block; } slot[MAX_SLOTS];
	int steps, forks;
};

struct code {
	uintptr_t lo, hi;        /* the executable segment */
};

struct modrm {
	int mod, reg, rm;        /* reg and rm with REX's bits */
	bool mem;
	int base, index;         /* -1: none */
	bool rip;
	int64_t disp;
	int len;                 /* the ModRM byte, SIB and displacement */
};

static void parse_modrm(const uint8_t *p, int rex, struct modrm *m)
{
	uint8_t b = p[0];
	int rm = b & 7, len = 1;
	m->mod = b >> 6;
	m->reg = ((b >> 3) & 7) | (rex & 4 ? 8 : 0);
	m->mem = m->mod != 3;
	m->base = m->index = -1;
	m->rip = false;
	m->disp = 0;
	m->rm = rm | (rex & 1 ? 8 : 0);
	if (!m->mem) {
		m->len = 1;
		return;
	}
	bool disp32 = m->mod == 2;
	if (rm == 4) {
		uint8_t sib = p[len++];
		int idx = ((sib >> 3) & 7) | (rex & 2 ? 8 : 0);
		m->index = idx == 4 ? -1 : idx;
		if ((sib & 7) == 5 && m->mod == 0)
			disp32 = true;
		else
			m->base = (sib & 7) | (rex & 1 ? 8 : 0);
	} else if (rm == 5 && m->mod == 0) {
		m->rip = true;
		disp32 = true;
	} else {
		m->base = m->rm;
	}
	if (m->mod == 1) {
		m->disp = (int8_t)p[len];
		len += 1;
	} else if (disp32) {
		int32_t d;
		memcpy(&d, p + len, 4);
		m->disp = d;
		len += 4;
	}
	m->len = len;
}

/* The slot of the function's own stack that m addresses, as (base,
 * offset); false for any other memory. */
static bool stack_slot(const struct state *s, const struct modrm *m, uint8_t *base,
		       int64_t *off)
{
	if (m->rip || m->index >= 0)
		return false;
	if (m->base == RSP && s->rsp_known) {
		*base = RSP;
		*off = s->rsp + m->disp;
		return true;
	}
	if (m->base == RBP && s->rbp_known) {
		*base = RBP;
		*off = m->disp;
		return true;
	}
	return false;
}

static int slot_find(const struct state *s, uint8_t base, int64_t off)
{
	for (int i = 0; i < s->nslots; i++)
		if (s->slot[i].base == base && s->slot[i].off == off)
			return i;
	return -1;
}

static bool slot_holds(const struct state *s, uint8_t base, int64_t off)
{
	int i = slot_find(s, base, off);
	return i >= 0 && s->slot[i].block;
}

/* false when the slots are full: the code is too much to follow */
static bool slot_set(struct state *s, uint8_t base, int64_t off, bool block)
{
	int i = slot_find(s, base, off);
	if (i < 0) {
		if (!block)
			return true;
		if (s->nslots == MAX_SLOTS)
			return false;
		i = s->nslots++;
		s->slot[i].base = base;
		s->slot[i].off = off;
	}
	s->slot[i].block = block;
	return true;
}

static void drop_slots(struct state *s, uint8_t base)
{
	for (int i = 0; i < s->nslots; i++)
		if (s->slot[i].base == base)
			s->slot[i].block = false;
}

/* Register r now holds something else (or the block, when block). */
static bool set_reg(struct state *s, int r, bool block)
{
	if (r == RSP)
		return false;    /* the stack moved in a way not followed */
	if (r == RBP) {
		s->rbp_known = false;
		drop_slots(s, RBP);
	}
	s->regs = (uint16_t)(block ? s->regs | 1u << r : s->regs & ~(1u << r));
	return true;
}

static bool reg_holds(const struct state *s, int r)
{
	return (s->regs >> r & 1) != 0;
}

static bool path_returns_block(const struct code *c, uintptr_t at, struct state s);

/* A conditional jump: where the flags are a NULL test of the block, the
 * path where it is not NULL only; otherwise both ways. */
static bool branch(const struct code *c, struct state *s, uintptr_t next, uintptr_t target,
		   int cond)
{
	if (s->null_test && (cond == 4 || cond == 5))
		return path_returns_block(c, cond == 4 ? next : target, *s);
	if (++s->forks > MAX_FORKS)
		return false;
	return path_returns_block(c, next, *s) && path_returns_block(c, target, *s);
}

/* An instruction at `at`, inside c (16 bytes of it), and its prefixes:
 * the bytes they take, whether 0x66 and 0xf3 are among them and its REX
 * (0: none); NULL past c or past five prefixes.  Only cs (the long
 * no-ops') besides 0x66 and 0xf3, or, where any, also 0xf2 and the other
 * segments. */
struct prefixes {
	int n, rex;
	bool p66, pf3;
};

static inline __attribute__((always_inline)) const uint8_t *insn_at(const struct code *c, uintptr_t at, bool any, struct prefixes *x)
{
	if (at < c->lo || at + 16 > c->hi)
		return NULL;
	const uint8_t *p = (const uint8_t *)at;
	int n = 0;
	x->p66 = x->pf3 = false;
	for (;; n++) {
		if (p[n] == 0x66)
			x->p66 = true;
		else if (p[n] == 0xf3)
			x->pf3 = true;
		else if (p[n] != 0x2e && (!any || (p[n] != 0xf2 && p[n] != 0x3e && p[n] != 0x26 &&
						   p[n] != 0x36 && p[n] != 0x64 && p[n] != 0x65)))
			break;
		if (n > 4)
			return NULL;
	}
	x->rex = (p[n] & 0xf0) == 0x40 ? p[n++] : 0;
	x->n = n;
	return p;
}

/* Does the code from at, along every path the block (rax at `at`) is not
 * NULL on, return it unchanged in rax, with nothing else done? */
static bool path_returns_block(const struct code *c, uintptr_t at, struct state s)
{
	while (s.steps++ < MAX_STEPS) {
		struct prefixes x;
		const uint8_t *p = insn_at(c, at, false, &x);
		if (!p)
			return false;
		int n = x.n, rex = x.rex;
		bool p66 = x.p66, pf3 = x.pf3, w = rex & 8;
		uint8_t op = p[n++];
		struct modrm m;
		uint8_t base;
		int64_t off;
		if ((p66 || pf3) && !(op == 0x90 || op == 0x0f || (pf3 && op == 0xc3)))
			return false;
		switch (op) {
		case 0xc3:                                   /* ret, rep ret */
		case 0xc2:                                   /* ret imm16 */
			return reg_holds(&s, RAX);
		case 0x90:                                   /* nop */
			at += (uintptr_t)n;
			continue;
		case 0xc9:                                   /* leave */
			s.rsp_known = false;
			drop_slots(&s, RSP);
			if (!set_reg(&s, RBP, false))
				return false;
			at += (uintptr_t)n;
			continue;
		case 0x50: case 0x51: case 0x52: case 0x53:  /* push r */
		case 0x54: case 0x55: case 0x56: case 0x57: {
			int r = (op & 7) | (rex & 1 ? 8 : 0);
			if (!s.rsp_known)
				return false;
			s.rsp -= 8;
			if (!slot_set(&s, RSP, s.rsp, reg_holds(&s, r)))
				return false;
			at += (uintptr_t)n;
			continue;
		}
		case 0x58: case 0x59: case 0x5a: case 0x5b:  /* pop r */
		case 0x5c: case 0x5d: case 0x5e: case 0x5f: {
			int r = (op & 7) | (rex & 1 ? 8 : 0);
			bool block = s.rsp_known && slot_holds(&s, RSP, s.rsp);
			if (!set_reg(&s, r, block))
				return false;
			s.rsp += 8;
			at += (uintptr_t)n;
			continue;
		}
		case 0xb8: case 0xb9: case 0xba: case 0xbb:  /* mov r, imm */
		case 0xbc: case 0xbd: case 0xbe: case 0xbf:
			if (!set_reg(&s, (op & 7) | (rex & 1 ? 8 : 0), false))
				return false;
			at += (uintptr_t)n + (w ? 8 : 4);
			continue;
		case 0xeb:                                   /* jmp rel8 */
			at += (uintptr_t)n + 1 + (uintptr_t)(int64_t)(int8_t)p[n];
			continue;
		case 0xe9: {                                 /* jmp rel32 */
			int32_t d;
			memcpy(&d, p + n, 4);
			at += (uintptr_t)n + 4 + (uintptr_t)(int64_t)d;
			continue;
		}
		case 0x70: case 0x71: case 0x72: case 0x73:  /* jcc rel8 */
		case 0x74: case 0x75: case 0x76: case 0x77:
		case 0x78: case 0x79: case 0x7a: case 0x7b:
		case 0x7c: case 0x7d: case 0x7e: case 0x7f: {
			uintptr_t next = at + (uintptr_t)n + 1;
			return branch(c, &s, next, next + (uintptr_t)(int64_t)(int8_t)p[n], op & 15);
		}
		case 0x0f:
			if (p[n] >= 0x80 && p[n] <= 0x8f) {  /* jcc rel32 */
				int32_t d;
				memcpy(&d, p + n + 1, 4);
				uintptr_t next = at + (uintptr_t)n + 5;
				return branch(c, &s, next, next + (uintptr_t)(int64_t)d, p[n] & 15);
			}
			if (p[n] == 0x1f) {                  /* nop r/m */
				parse_modrm(p + n + 1, rex, &m);
				at += (uintptr_t)n + 1 + (uintptr_t)m.len;
				continue;
			}
			if (pf3 && p[n] == 0x1e && p[n + 1] == 0xfa) { /* endbr64 */
				at += (uintptr_t)n + 2;
				continue;
			}
			return false;
		case 0x89:                                   /* mov r/m, r */
			parse_modrm(p + n, rex, &m);
			if (!m.mem) {
				if (!set_reg(&s, m.rm, w && reg_holds(&s, m.reg)))
					return false;
			} else if (!stack_slot(&s, &m, &base, &off) ||
				   !slot_set(&s, base, off, w && reg_holds(&s, m.reg))) {
				return false;    /* a store outside its own frame */
			}
			at += (uintptr_t)n + (uintptr_t)m.len;
			continue;
		case 0x8b:                                   /* mov r, r/m */
			parse_modrm(p + n, rex, &m);
			if (!m.mem)
				w = w && reg_holds(&s, m.rm);
			else
				w = w && stack_slot(&s, &m, &base, &off) && slot_holds(&s, base, off);
			if (!set_reg(&s, m.reg, w))
				return false;
			at += (uintptr_t)n + (uintptr_t)m.len;
			continue;
		case 0x8d:                                   /* lea */
			parse_modrm(p + n, rex, &m);
			if (!m.mem)
				return false;
			if (m.reg == RSP) {
				/* the frame-pointer epilogue: rsp from rbp */
				s.rsp_known = false;
				drop_slots(&s, RSP);
			} else if (!set_reg(&s, m.reg, false)) {
				return false;
			}
			at += (uintptr_t)n + (uintptr_t)m.len;
			continue;
		case 0x85:                                   /* test r/m, r */
			parse_modrm(p + n, rex, &m);
			s.null_test = w && !m.mem && m.reg == m.rm && reg_holds(&s, m.reg);
			at += (uintptr_t)n + (uintptr_t)m.len;
			continue;
		case 0x31:                                   /* xor r/m, r */
		case 0x33:                                   /* xor r, r/m */
			parse_modrm(p + n, rex, &m);
			if (m.mem || !set_reg(&s, op == 0x31 ? m.rm : m.reg, false))
				return false;
			s.null_test = false;
			at += (uintptr_t)n + (uintptr_t)m.len;
			continue;
		case 0x83:                                   /* op r/m, imm8 */
		case 0x81: {                                 /* op r/m, imm32 */
			parse_modrm(p + n, rex, &m);
			int64_t imm;
			if (op == 0x83) {
				imm = (int8_t)p[n + m.len];
			} else {
				int32_t i32;
				memcpy(&i32, p + n + m.len, 4);
				imm = i32;
			}
			int ext = m.reg & 7;
			bool on_block = m.mem ? stack_slot(&s, &m, &base, &off) &&
						slot_holds(&s, base, off)
					      : reg_holds(&s, m.rm);
			if (ext == 7) {                      /* cmp */
				s.null_test = w && imm == 0 && on_block;
			} else if (!m.mem && m.rm == RSP && w && (ext == 0 || ext == 5)) {
				s.rsp += ext == 0 ? imm : -imm;  /* add, sub rsp */
				s.null_test = false;
			} else if (!m.mem) {
				if (!set_reg(&s, m.rm, false))
					return false;
				s.null_test = false;
			} else {
				return false;    /* arithmetic on memory */
			}
			at += (uintptr_t)n + (uintptr_t)m.len + (op == 0x83 ? 1 : 4);
			continue;
		}
		default:
			return false;
		}
	}
	return false;
}

/* ---- the caller's use of the result (x86-64) --------------------------- */

/* What the code at a return address does with rax as the call left it */
enum { FATE_DEAD = 1, FATE_USED = 2, FATE_PASSED = 3 };
#define FATE_STEPS 48
#define FATE_FORKS 6

/* Does the memory operand m address through rax? */
static bool modrm_reads_rax(const struct modrm *m)
{
	return m->mem && (m->base == RAX || m->index == RAX);
}

/* Is the register operand r (a ModRM field's, REX applied) rax, or for a
 * byte operand without REX ah (4), part of it? */
static bool is_rax(int r, bool byte, int rex)
{
	return r == RAX || (byte && !rex && r == 4);
}

static int fate_from(const struct code *c, uintptr_t at, int *steps, int *forks);

static int fate_fork(const struct code *c, uintptr_t next, uintptr_t target, int *steps,
		     int *forks)
{
	if (++*forks > FATE_FORKS)
		return FATE_USED;
	int a = fate_from(c, next, steps, forks);
	if (a == FATE_USED)
		return a;
	int b = fate_from(c, target, steps, forks);
	if (b == FATE_USED)
		return b;
	return a == FATE_PASSED || b == FATE_PASSED ? FATE_PASSED : FATE_DEAD;
}

/* One path from at: the first instruction that reads rax (used), writes
 * all of it (dead) or returns (passed); anything not decoded, used. */
static int fate_from(const struct code *c, uintptr_t at, int *steps, int *forks)
{
	while ((*steps)++ < FATE_STEPS) {
		struct prefixes x;
		const uint8_t *p = insn_at(c, at, true, &x);
		if (!p)
			return FATE_USED;
		int n = x.n, rex = x.rex;
		bool w = rex & 8, pf3 = x.pf3;
		bool full = !x.p66 || w;        /* a write of it all (32 bits zero-extend) */
		int imm = w || !x.p66 ? 4 : 2;  /* an immediate of the operand's size */
		uint8_t op = p[n++];
		struct modrm m;
		bool byte = false, reads_reg = false, reads_rm = false, writes_reg = false,
		     writes_rm = false;
		int tail = 0;                 /* bytes after ModRM */
		if (op < 0x40 && (op & 7) < 4) {             /* ALU r/m, r and r, r/m */
			byte = !(op & 1);
			parse_modrm(p + n, rex, &m);
			int alu = op >> 3;
			if ((alu == 5 || alu == 6) && !m.mem && m.reg == m.rm && !byte && full) {
				if (m.reg == RAX)
					return FATE_DEAD;    /* xor eax, eax: a zeroing */
			} else {
				reads_reg = reads_rm = true;
			}
		} else if (op < 0x40 && ((op & 7) == 4 || (op & 7) == 5)) {
			return FATE_USED;                    /* op al/eax, imm */
		} else {
			switch (op) {
			case 0x50 ... 0x5f:                          /* push r, pop r */
				if (((op & 7) | (rex & 1 ? 8 : 0)) == RAX)
					return op < 0x58 ? FATE_USED : FATE_DEAD;
				at += (uintptr_t)n;
				continue;
			case 0x68:                                   /* push imm */
				at += (uintptr_t)n + 4;
				continue;
			case 0x6a:
				at += (uintptr_t)n + 1;
				continue;
			case 0x70 ... 0x7f: {                        /* jcc rel8 */
				uintptr_t next = at + (uintptr_t)n + 1;
				return fate_fork(c, next, next + (uintptr_t)(int64_t)(int8_t)p[n],
						 steps, forks);
			}
			case 0x63:                                   /* movsxd */
			case 0x8b:                                   /* mov r, r/m */
			case 0x8d:                                   /* lea */
				reads_rm = op != 0x8d;
				writes_reg = true;
				break;
			case 0x69:                                   /* imul r, r/m, imm */
				reads_rm = writes_reg = true;
				tail = imm;
				break;
			case 0x6b:
				reads_rm = writes_reg = true;
				tail = 1;
				break;
			case 0x80:                                   /* ALU r/m, imm */
				byte = true;
				reads_rm = true;
				tail = 1;
				break;
			case 0x81:
				reads_rm = true;
				tail = imm;
				break;
			case 0x83:
				reads_rm = true;
				tail = 1;
				break;
			case 0x84: case 0x86:                        /* test, xchg */
				byte = true;
				reads_reg = reads_rm = true;
				break;
			case 0x85: case 0x87:
				reads_reg = reads_rm = true;
				break;
			case 0x88:                                   /* mov r/m8, r8 */
				byte = true;
				reads_reg = writes_rm = true;
				break;
			case 0x89:                                   /* mov r/m, r */
				reads_reg = writes_rm = true;
				break;
			case 0x8a:                                   /* mov r8, r/m8 */
				byte = true;
				reads_rm = writes_reg = true;
				break;
			case 0x8f:                                   /* pop r/m */
				writes_rm = true;
				break;
			case 0x90:                                   /* nop, xchg r8, rax */
				if (rex & 1)
					return FATE_USED;
				at += (uintptr_t)n;
				continue;
			case 0xb0 ... 0xb7:                          /* mov r8, imm8 */
				if (is_rax((op & 7) | (rex & 1 ? 8 : 0), true, rex))
					return FATE_USED;    /* a part of it: not followed */
				at += (uintptr_t)n + 1;
				continue;
			case 0xb8 ... 0xbf:                          /* mov r, imm */
				if (((op & 7) | (rex & 1 ? 8 : 0)) == RAX)
					return full ? FATE_DEAD : FATE_USED;
				at += (uintptr_t)n + (w ? 8 : (uintptr_t)imm);
				continue;
			case 0xc0: case 0xd0: case 0xd2:             /* shifts */
				byte = true;
				reads_rm = true;
				tail = op == 0xc0;
				break;
			case 0xc1: case 0xd1: case 0xd3:
				reads_rm = true;
				tail = op == 0xc1;
				break;
			case 0xc2: case 0xc3:                        /* ret */
				return FATE_PASSED;
			case 0xc6:                                   /* mov r/m8, imm8 */
				byte = true;
				writes_rm = true;
				tail = 1;
				break;
			case 0xc7:                                   /* mov r/m, imm */
				writes_rm = true;
				tail = imm;
				break;
			case 0xc9:                                   /* leave */
				at += (uintptr_t)n;
				continue;
			case 0xe8:                                   /* call: rax is no argument */
				return FATE_DEAD;
			case 0xe9: {                                 /* jmp rel32 */
				int32_t d;
				memcpy(&d, p + n, 4);
				at += (uintptr_t)n + 4 + (uintptr_t)(int64_t)d;
				continue;
			}
			case 0xeb:                                   /* jmp rel8 */
				at += (uintptr_t)n + 1 + (uintptr_t)(int64_t)(int8_t)p[n];
				continue;
			case 0xf6: case 0xf7: {                      /* group 3 */
				parse_modrm(p + n, rex, &m);
				int ext = m.reg & 7;
				if (ext >= 4)
					return FATE_USED;    /* mul, div: rax implied */
				byte = op == 0xf6;
				reads_rm = true;
				tail = ext < 2 ? (byte ? 1 : imm) : 0;
				break;
			}
			case 0xfe: case 0xff: {                      /* group 5 */
				parse_modrm(p + n, rex, &m);
				int ext = m.reg & 7;
				byte = op == 0xfe;
				bool on_rax = modrm_reads_rax(&m) || (!m.mem && is_rax(m.rm, byte, rex));
				if (ext == 2 && !byte)           /* call r/m */
					return on_rax ? FATE_USED : FATE_DEAD;
				if (ext > 1 && (byte || ext != 6))
					return FATE_USED;        /* jmp r/m and the rest */
				if (on_rax)
					return FATE_USED;
				at += (uintptr_t)n + (uintptr_t)m.len;
				continue;
			}
			case 0x0f: {
				uint8_t op2 = p[n++];
				if (op2 >= 0x80 && op2 <= 0x8f) {    /* jcc rel32 */
					int32_t d;
					memcpy(&d, p + n, 4);
					uintptr_t next = at + (uintptr_t)n + 4;
					return fate_fork(c, next, next + (uintptr_t)(int64_t)d, steps,
							 forks);
				}
				if (pf3 && op2 == 0x1e && p[n] == 0xfa) { /* endbr64 */
					at += (uintptr_t)n + 1;
					continue;
				}
				if (op2 == 0x0b)                     /* ud2: no way on */
					return FATE_DEAD;
				if (op2 == 0x1f) {                   /* nop r/m */
					parse_modrm(p + n, rex, &m);
					at += (uintptr_t)n + (uintptr_t)m.len;
					continue;
				}
				if ((op2 >= 0x40 && op2 <= 0x4f) || op2 == 0xaf) {
					reads_reg = reads_rm = writes_reg = true; /* cmov, imul */
				} else if (op2 >= 0x90 && op2 <= 0x9f) {  /* setcc */
					byte = true;
					writes_rm = true;
				} else if (op2 == 0xb6 || op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf) {
					byte = op2 == 0xb6 || op2 == 0xbe; /* movzx, movsx */
					parse_modrm(p + n, rex, &m);
					if (modrm_reads_rax(&m) || (!m.mem && is_rax(m.rm, byte, rex)))
						return FATE_USED;
					if (m.reg == RAX)
						return FATE_DEAD;
					at += (uintptr_t)n + (uintptr_t)m.len;
					continue;
				} else if (op2 == 0x6e || op2 == 0x2a) { /* movd/q xmm, r; cvtsi2s */
					reads_rm = true;
				} else if (op2 == 0x10 || op2 == 0x11 || op2 == 0x28 ||
					   op2 == 0x29 || op2 == 0x57 || op2 == 0x6f ||
					   op2 == 0x7f || op2 == 0xd6 || op2 == 0xef ||
					   (op2 == 0x7e && pf3) || op2 == 0x2e || op2 == 0x2f ||
					   (op2 >= 0x58 && op2 <= 0x5f) || op2 == 0x14 || op2 == 0x16 ||
					   op2 == 0x12 || op2 == 0x13 || op2 == 0x17 || op2 == 0x6c) {
					/* moves and arithmetic of xmm registers: rax
					 * only in an address */
					parse_modrm(p + n, rex, &m);
					if (modrm_reads_rax(&m))
						return FATE_USED;
					at += (uintptr_t)n + (uintptr_t)m.len;
					continue;
				} else {
					return FATE_USED;
				}
				break;
			}
			default:
				return FATE_USED;
			}
		}
		parse_modrm(p + n, rex, &m);
		if (modrm_reads_rax(&m))
			return FATE_USED;
		bool reg_rax = is_rax(m.reg, byte, rex);
		bool rm_rax = !m.mem && is_rax(m.rm, byte, rex);
		if ((reads_reg && reg_rax) || (reads_rm && rm_rax))
			return FATE_USED;
		if ((writes_reg && reg_rax) || (writes_rm && rm_rax))
			return full && !byte ? FATE_DEAD : FATE_USED;
		at += (uintptr_t)n + (uintptr_t)m.len + (uintptr_t)tail;
	}
	return FATE_USED;
}

static int fate(uintptr_t pc)
{
	struct code c;
	if (!mc_code_segment(pc, &c.lo, &c.hi))
		return FATE_USED;
	int steps = 0, forks = 0;
	return fate_from(&c, pc, &steps, &forks);
}

/* 2: the code at pc hands the block on (thin), 1: no */
static int judge(uintptr_t pc)
{
	struct code c;
	if (!mc_code_segment(pc, &c.lo, &c.hi))
		return 1;
	struct state s;
	memset(&s, 0, sizeof s);
	s.regs = 1u << RAX;
	s.rsp_known = s.rbp_known = true;
	return path_returns_block(&c, pc, s) ? 2 : 1;
}

#else

static int judge(uintptr_t pc)
{
	(void)pc;
	return 1;
}

enum { FATE_DEAD = 1, FATE_USED = 2, FATE_PASSED = 3 };
static int fate(uintptr_t pc)
{
	(void)pc;
	return FATE_USED;
}

#endif

/* Verdicts by return address: (key << 2) | verdict (1-3), in two
 * tables mapped at first need, tried in turn: a small one (2 KiB, its
 * window of slots full before the large one is asked) and a large one
 * (64 KiB, lazily mapped).  A short process's exit judges a few dozen
 * addresses: spread over the large table alone they were 2-4 page
 * faults, two a page (probed, then written).  Nothing is taken out of a
 * table, so a window once full stays full and an address is always
 * looked for where it was put; a full large table only means judging
 * again.  Two questions share the tables: the code's (judge, keyed by
 * the pc: 1 no, 2 yes) and the caller's (fate, keyed by the pc with bit
 * 61 set: a user address has 47 bits). */
#define VERDICTS_FIRST 256
#define VERDICTS 8192
#define FATE_KEY (1ull << 61)
static _Atomic(_Atomic uint64_t *) verdicts_first, verdicts;

static _Atomic uint64_t *verdict_table(_Atomic(_Atomic uint64_t *) *at, size_t slots, bool lazy)
{
	_Atomic uint64_t *t = atomic_load(at);
	if (!t) {
		size_t bytes = slots * sizeof *t;
		_Atomic uint64_t *fresh = lazy ? mc_map_lazy(bytes) : mc_map(bytes);
		if (fresh && !lazy)
			mc_write_first((void *)fresh, bytes);
		if (fresh && !atomic_compare_exchange_strong(at, &t, fresh))
			mc_unmap((void *)fresh, bytes);
		else
			t = fresh;
	}
	return t;
}

/* key's question answered (1-3): judged by ask(pc) and kept in t; 0:
 * t's window for key is full (or there is no t). */
static int verdict_in(_Atomic uint64_t *t, size_t slots, uint64_t key, uintptr_t pc,
		      int (*ask)(uintptr_t))
{
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 51) & (slots - 1);
	for (size_t i = 0; t && i < 16; i++) {
		uint64_t v = atomic_load_explicit(&t[(h + i) & (slots - 1)],
						  memory_order_relaxed);
		if (v >> 2 == key)
			return (int)(v & 3);
		if (v)
			continue;
		int got = ask(pc);
		uint64_t none = 0;
		atomic_compare_exchange_strong(&t[(h + i) & (slots - 1)], &none,
					       key << 2 | (uint64_t)got);
		return got;
	}
	return 0;
}

static int verdict(uint64_t key, uintptr_t pc, int (*ask)(uintptr_t))
{
	int v = verdict_in(verdict_table(&verdicts_first, VERDICTS_FIRST, false),
			   VERDICTS_FIRST, key, pc, ask);
	if (!v)
		v = verdict_in(verdict_table(&verdicts, VERDICTS, true), VERDICTS, key, pc, ask);
	return v ? v : ask(pc);
}

bool mc_allocfn_thin(uintptr_t pc)
{
	if (!mc_opt.alloc_fn_auto || !pc)
		return false;
	return verdict((uint64_t)pc, pc, judge) == 2;
}

/* Does the caller of frame i take what it returns: the code at f[i+1]
 * reads rax, or returns it to a caller that does?  Past the stack's
 * last frame, yes: nothing says otherwise.  Out of line: asked only of a
 * thin function's frame (lib/text-order.ld's group 7). */
static __attribute__((noinline)) bool result_taken(const uintptr_t *f, int n, int i)
{
	for (int k = i + 1; k < n; k++) {
		if (!f[k])
			return true;
		int v = verdict(FATE_KEY | (uint64_t)f[k], f[k], fate);
		if (v != FATE_PASSED)
			return v == FATE_USED;
	}
	return true;
}

bool mc_allocfn_is(const uintptr_t *f, int n, int i, const struct mc_frame_info *fi,
		   bool inlined)
{
	return mc_allocfn_named(fi) ||
	       (mc_allocfn_thin(f[i]) && (inlined || result_taken(f, n, i)));
}

int mc_allocfn_lead(const uintptr_t *f, int n, struct mc_frame_info *fi)
{
	int lead = 0;
	for (int i = 0; i < n; i++) {
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++) {
			if (!mc_allocfn_is(f, n, i, &fi[j], j + 1 < k))
				return lead;
			lead++;
		}
	}
	return lead;
}
