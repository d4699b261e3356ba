/*
 * stacks.c - allocation stacks: capture, and the hash the depot
 * (depot.c) stores them by.
 *
 * Three unwinders (MEMCHECK_UNWINDER):
 *   fp         walks frame pointers from the malloc-family function's
 *              own frame, and through functions built without them
 *              (Debian's libraries: strdup, setlocale, fopen ...) by
 *              their DWARF call-frame information (cfi.c), so that every
 *              stack reaches the program's frames.  ~10 ns where the
 *              program has frame pointers.
 *   libunwind  unw_backtrace(), loaded with dlopen when chosen.
 *   glibc      backtrace(3); slowest; loads libgcc_s on first use.
 *
 * The fp unwinder's stacks are those of the exact walk (below): frame
 * pointers where a function keeps one, its CFI where it does not, as a
 * debugger steps.  Asking each frame which it is costs a table lookup a
 * frame, so the common path does not: it walks frame pointers alone
 * (walk_fp, the speed of its chain of loads), and the thread's cache of
 * stacks, keyed by that walk's hash, knows from the stack's first
 * capture whether the exact walk adds anything to it (capture_more).
 * For a program with frame pointers it adds, at most, the CFI steps
 * from main's caller or start_thread to the thread's entry, which the
 * thread keeps (last_run) and checks in a few compares; anything else
 * (strdup, a qsort comparison) takes the exact walk each time.
 *
 * Where the thread's cache has lost a stack (a parser's 90,000 call
 * paths: a 16-frame walk each, few of them repeated before 32 others),
 * the exact walk need not be repeated either: the depot keeps, with the
 * stacks whose exact walk added nothing to walk_fp's frames but the
 * thread's run, an index by hash (depot.c), and capture_known finds the
 * stack there from walk_fp's hash with one lookup, instead of a second
 * walk storing the frames, a rule lookup a frame and the depot's compare
 * (callgrind, tree_bench.c 1 M blocks: 1,531 M -> 1,303 M instructions
 * with that walk, 1,172 M without; bare 364 M).  That lookup, a cache
 * miss in megabytes, is mostly not made either: the depot keeps with
 * each stack the stacks the thread looked up after it last time
 * (me.prev, depot.c's then), and a program that repeats itself finds
 * its next stack there, in a line it has just touched.
 *
 * The traps:
 *  - Two walks must give one stack one hash, or one call path gets two
 *    ids.  walk_fp and the exact walk agree frame for frame up to the
 *    first function without a frame pointer: for one with, the frame
 *    pointer step is the CFI step.
 *  - walk_fp's frames past a function without a frame pointer are not
 *    a stack at all (two call sites of strdup in one function walk to
 *    one chain), so its hash alone never names such a stack: the cache
 *    sends it to the exact walk, whose hash does.
 *  - rbp 0 is not the end of the stack where a function without a frame
 *    pointer keeps something else there (pthread_create does, calling
 *    _dl_allocate_tls): only the CFI's undefined return address (_start,
 *    clone) or a step that leaves the stack ends the exact walk.
 *  - Reads stay on the thread's stack: every step checks the address it
 *    reads against the frame below and the stack's top.
 *  - Code without CFI is walked by its frame pointer, as everything was
 *    before: reports cut such a stack at the first frame outside any
 *    object's code (depot.c).  The rules of code unloaded with dlclose
 *    stay in the table; code loaded at the same address later is walked
 *    by them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"

static int (*unw_backtrace_fn)(void **, int);

/* This thread's stack, learned on its first capture: a frame may start
 * anywhere in [lo, top], top being the stack's end less 16 bytes (the
 * saved frame pointer and the return address); until learned, lo is
 * UINTPTR_MAX and top 0.
 * With it, a few recent stacks by hash: a hot allocation site finds its
 * id here without touching the depot's (cache-cold) index.  One TLS
 * block, so a capture reaches all of it from one address. */
#define CACHE 32
static MC_TLS struct {
	struct slot { uint64_t hash; uint32_t id, gen; } cache[CACHE]; /* first: capture_slot adds no offset */
	uintptr_t lo, top;
	uint32_t prev; /* the stack capture_known found or indexed last: depot.c's then */
	uint32_t memo; /* its kept walks' block, 1 + its index; 0: none yet, MEMO_NONE */
	/* what capture_known found last, for capture_more after it: the key
	 * no stack has (0: none), whether the run starts where walk_fp
	 * stopped */
	uint64_t absent;
	int run_at_stop;
	/* capture_lost's arguments for capture_more, kept in no register
	 * while it looks the stack up */
	int lost_max;
	void *lost_fp;
	const struct slot *lost_c;
} me = { .lo = UINTPTR_MAX }; /* unlearned: see walk_fp */

/* (The cache's helpers are named capture_*: the entries of
 * suppressions/memcheck.supp for the walk's reads, which valgrind may
 * call uninitialised, match *capture*.)
 *
 * The cache is 16 pairs of slots, a pair for each value of a hash's top
 * 4 bits (the byte offset straight from h, saving the index's scaling
 * on the common path), the stack used last in the pair's first slot: a
 * new stack moves the first slot's to the second, and a hit in the
 * second swaps them (see capture_cache_find).  Two hot stacks of one
 * pair then cost a few instructions more, not a walk that stores the
 * frames and a depot lookup each time.  (Each stack once had a slot of
 * its own and the pair's other as its second: two stacks whose own
 * slots were a pair pushed each other out on every capture.) */
static inline struct slot *capture_slot(uint64_t h)
{
	_Static_assert(sizeof(struct slot) == 16 && CACHE == 32, "capture_slot's shift and mask");
	return (struct slot *)((char *)me.cache + (h >> 55 & 0x1e0));
}

static inline struct slot *capture_other_slot(uint64_t h)
{
	return capture_slot(h) + 1;
}

static void memo_pool_init(void);

static void *getattr_real; /* the C library's pthread_getattr_np (mc_stack_getattr) */

void mc_stacks_init(void)
{
	if (mc_opt.unwinder == MC_UNWIND_LIBUNWIND) {
		/* Its failure (libunwind absent) left pending for the
		 * program's dlerror() no more (dlstate.c). */
		struct mc_dlerror e;
		mc_dlerror_save(&e);
		void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
		unw_backtrace_fn = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
		mc_dlerror_restore(&e);
		if (!unw_backtrace_fn) {
			mc_log("MEMCHECK_UNWINDER=libunwind: cannot load libunwind.so.8 "
			       "(Debian package libunwind8); using fp");
			mc_opt.unwinder = MC_UNWIND_FP;
		}
	} else if (mc_opt.unwinder == MC_UNWIND_GLIBC) {
		/* The first call loads libgcc_s; do it now, not inside some
		 * malloc the program makes while holding a lock. */
		void *f[2];
		backtrace(f, 2);
	}
	memo_pool_init();
	/* The C library's pthread_getattr_np found now, on the one thread
	 * that starts, not at another thread's first capture: that lookup
	 * walks the objects under objects.c's walk lock, inside a malloc of
	 * the program's, and a fork whose handlers held the walk lock and
	 * then waited for that thread's slot hung (tests/prog/forklocks, one
	 * run in ten to sixty). */
	mc_sym_next_cached("pthread_getattr_np", &getattr_real);
}

/* A polynomial hash of n frames, the sum of frame[i] * K^(n-i) mod 2^64,
 * run as h = (h + frame) * K: two instructions a frame on the capture's
 * hot path, whose multiply chain runs beside the walk's chain of loads,
 * no shorter.  Two stacks collide only where their frames' differences,
 * times distinct powers of the odd K, sum to 0 mod 2^64 (or, of two
 * depths, a longer's extra frames hit one value): for return addresses,
 * a 2^-64 chance, not a structure.  Every frame's every bit reaches the
 * top bits, so the cache and the depot index by those; the low bits see
 * only the frames' low bits.
 *
 * A hash of 0 is as likely as any other, and harmless: an empty cache
 * slot (hash 0, id 0) then answers "no stack", as rare a loss as a
 * collision's wrong stack. */
#define HASH_K 0x9e3779b97f4a7c15ull

static inline uint64_t hash_step(uint64_t h, uintptr_t frame)
{
	/* h += frame, in h's register: left to itself, gcc adds into
	 * frame's and copies the sum back, an instruction a frame. */
	__asm__("add %1, %0" : "+r"(h) : "r"(frame) : "cc");
	return h * HASH_K;
}

/* hash_step with K in a register the caller holds (k: HASH_K, hidden
 * from gcc by hash_k()): in a loop gcc otherwise loads the 10-byte
 * constant again in every turn. */
static inline uint64_t hash_k(void)
{
	uint64_t k = HASH_K;
	__asm__("" : "+r"(k));
	return k;
}

static inline uint64_t hash_step_k(uint64_t h, uintptr_t frame, uint64_t k)
{
	__asm__("add %1, %0" : "+r"(h) : "r"(frame) : "cc");
	return h * k;
}

static inline uint64_t hash_frames(const uintptr_t *f, int n)
{
	uint64_t h = 0;
	for (int i = 0; i < n; i++)
		h = hash_step(h, f[i]);
	return h;
}

uint32_t mc_stack_intern(const uintptr_t *f, int n)
{
	return n > 0 ? mc_depot_intern(hash_frames(f, n), f, n) : 0;
}

/* ---- the rule table ---------------------------------------------------
 * How the walk steps from each return address to its caller depends on
 * the code there only, so cfi.c reads it once an address and this table
 * keeps it: open addressing by the address's hash, PROBE slots at most.
 * A slot's key is 0 (empty), the return address itself (a frame-pointer
 * frame, or code without CFI, which the walk takes for one), or the
 * address with RULE_CFI and the rule's kind set, its offsets in val.
 * Writers hold rules_lock and clear a key before changing its val;
 * readers of a val read the key again after it.  Slot 0 of each table
 * is its header: its val is the table's shift (64 - log2 of its slots),
 * so a reader finds it with the slots it goes with.  The table is
 * mapped at the first lookup, 512 slots (8 KiB), and grows when a
 * quarter full: to 1024 slots, then by fours; old tables stay mapped for
 * readers still in them (together at most half of the newest).
 * Mapped populated (mc_map), each page a cost of every process that
 * captures a stack: a short test built with frame pointers fills 16 to
 * 50 rules (bench/suite_test), /bin/date 75, sort 69, git --version 124,
 * all within 128, where the first table was 16 KiB (four pages
 * populated, 1,024 slots for at most a few dozen rules; short46); ls -l
 * fills 157, python3 -c pass 655: their tables are 8 KiB more than
 * before. */
struct rule_slot {
	_Atomic uint64_t key, val;
};
#define RULE_CFI (1ull << 63)
#define RULE_KIND_SHIFT 59 /* 3 bits of enum mc_cfi_kind */
#define RULE_PC_MASK ((1ull << RULE_KIND_SHIFT) - 1)
#define RULES_MIN_BITS 9
#define RULES_MAX_BITS 16
#define PROBE 8

static _Atomic(struct rule_slot *) rules;
static unsigned rules_used;           /* under rules_lock */
static bool rules_failed;             /* could not be mapped: rules not kept */
static atomic_flag rules_lock = ATOMIC_FLAG_INIT;

static inline unsigned rule_shift(const struct rule_slot *rt)
{
	return (unsigned)atomic_load_explicit(&rt[0].val, memory_order_relaxed);
}

/* The k-th slot to look at for pc. */
static inline size_t rule_probe(unsigned shift, uintptr_t pc, size_t k)
{
	size_t i = (size_t)((pc * HASH_K) >> shift), mask = ((size_t)1 << (64 - shift)) - 1;
	return (i + k) & mask;
}

static void rules_take(void)
{
	while (atomic_flag_test_and_set_explicit(&rules_lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void rules_give(void)
{
	atomic_flag_clear_explicit(&rules_lock, memory_order_release);
}

static void slot_write(struct rule_slot *s, uint64_t key, uint64_t val)
{
	atomic_store_explicit(&s->key, 0, memory_order_release);
	atomic_store_explicit(&s->val, val, memory_order_release);
	atomic_store_explicit(&s->key, key, memory_order_release);
}

/* Put key/val in table rt, in the first free slot of its probe, or over
 * the last when all PROBE are taken (never over the header).  Under
 * rules_lock. */
static void rule_put(struct rule_slot *rt, uint64_t key, uint64_t val)
{
	unsigned shift = rule_shift(rt);
	size_t j = 0;
	for (size_t k = 0; k < PROBE && (!j || atomic_load_explicit(&rt[j].key,
								     memory_order_relaxed)); k++)
		j = rule_probe(shift, key & RULE_PC_MASK, k);
	slot_write(&rt[j ? j : 1], key, val);
}

/* A table of 2^bits slots with rt's entries (rt may be NULL); NULL when
 * it cannot be mapped.  Under rules_lock. */
static struct rule_slot *rules_grow(struct rule_slot *rt, unsigned bits)
{
	struct rule_slot *t = mc_map(sizeof *t << bits);
	if (!t)
		return NULL;
	atomic_store_explicit(&t[0].key, 1, memory_order_relaxed); /* no pc, not empty */
	atomic_store_explicit(&t[0].val, 64 - bits, memory_order_relaxed);
	if (rt) {
		size_t n = (size_t)1 << (64 - rule_shift(rt));
		for (size_t j = 1; j < n; j++) {
			uint64_t k = atomic_load_explicit(&rt[j].key, memory_order_relaxed);
			if (k)
				rule_put(t, k, atomic_load_explicit(&rt[j].val, memory_order_relaxed));
		}
	}
	return t;
}

/* The rule at return address pc, as a slot's key and val, read from the
 * CFI and stored.
 *
 * A return address in libmemcheck's own code (mc_text_lo: its
 * executable segment; no range where it is linked into the program)
 * takes a frame pointer's rule without its CFI: the library is built
 * with frame pointers (GNUmakefile's LIBFLAGS), and gcc sets up a
 * function's frame before any call that is not a tail call, so at each
 * such return address the CFI's rule is the frame pointer's (CFA rbp +
 * 16, rbp saved at CFA - 16).  The wrappers built without one
 * (MC_FRAMELESS) reach every function that records by a jump, as
 * mc_call_frame, which steps memcheck's own frames by their frame
 * pointers, already requires.  Such a frame is walked where memcheck
 * called the C library with the guard down and the C library allocated
 * (the program's pthread_getattr_np reads /proc/self/maps through
 * stdio): its CFI lookup read libmemcheck's .eh_frame, 64 KiB blocks
 * away from the code a process runs (tests/test_codeblocks). */
static __attribute__((noinline)) uint64_t capture_rule_fill(uintptr_t pc, uint64_t *val)
{
	struct mc_cfi_rule r = { MC_CFI_FP, 0, 0 };
	if (pc - mc_text_lo >= mc_text_len)
		mc_cfi_rule(pc, &r);
	uint64_t key = pc;
	*val = 0;
	if (r.kind != MC_CFI_FP && r.kind != MC_CFI_UNKNOWN) {
		key = pc | RULE_CFI | (uint64_t)r.kind << RULE_KIND_SHIFT;
		*val = (uint64_t)(uint32_t)r.cfa_off | (uint64_t)(uint32_t)r.rbp_off << 32;
	}
	if (pc > RULE_PC_MASK || pc < 4096)
		return key; /* not a user-space address: never stored */
	rules_take();
	struct rule_slot *rt = atomic_load_explicit(&rules, memory_order_relaxed);
	if (!rt && !rules_failed) {
		rt = rules_grow(NULL, RULES_MIN_BITS);
		rules_failed = !rt;
		atomic_store_explicit(&rules, rt, memory_order_release);
	}
	if (rt) {
		unsigned bits = 64 - rule_shift(rt);
		/* another thread's, meanwhile: no further than the probe's
		 * first empty slot (a key is put in the first empty one, and
		 * a slot once taken is never emptied), where a new rule's
		 * search ends at once */
		bool there = false;
		for (size_t k = 0; k < PROBE && !there; k++) {
			uint64_t at = atomic_load_explicit(&rt[rule_probe(64 - bits, pc, k)].key,
							   memory_order_relaxed);
			if (!at)
				break;
			there = at == key;
		}
		if (!there && ++rules_used > (1u << bits) / 4 && bits < RULES_MAX_BITS) {
			/* 9, 10, 12, 14, 16: the maximum reached */
			struct rule_slot *t = rules_grow(rt, bits + 2 - (bits & 1));
			if (t)
				atomic_store_explicit(&rules, rt = t, memory_order_release);
		}
		if (!there)
			rule_put(rt, key, *val);
	}
	rules_give();
	return key;
}

/* The table as a walk reads it: its address and shift loaded once a
 * walk, not once a frame, and again after a fill (which may have grown
 * it).  Before the table is mapped, a table of two empty slots stands
 * in, so the walk's first probe needs no test: it misses, and the slow
 * path fills. */
struct rule_view {
	const struct rule_slot *rt;
	unsigned shift;
};
static struct rule_slot rules_none[2];

static inline void rule_view_load(struct rule_view *v)
{
	const struct rule_slot *rt = atomic_load_explicit(&rules, memory_order_acquire);
	v->rt = rt ? rt : rules_none;
	v->shift = rt ? rule_shift(rt) : 63;
}

/* Slot s's rule if it is pc's: true, the key in *key (and val in *val
 * where it is a CFI rule). */
static inline __attribute__((always_inline)) bool
capture_rule_in(const struct rule_slot *s, uintptr_t pc, uint64_t *key, uint64_t *val)
{
	uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
	*key = k;
	if (likely(k == pc))
		return true;
	if ((k & RULE_PC_MASK) == pc) {
		*val = atomic_load_explicit(&s->val, memory_order_acquire);
		return likely(atomic_load_explicit(&s->key, memory_order_acquire) == k);
	}
	return false;
}

/* The rule at return address pc, where the first slot of its probe is
 * not pc's frame-pointer key: the rest of the probe, else the CFI.  (A
 * key whose address bits are pc's but is not pc has RULE_CFI set.) */
static __attribute__((noinline)) uint64_t capture_rule_slow(struct rule_view *v, uintptr_t pc,
							    uint64_t *val)
{
	const struct rule_slot *rt = v->rt;
	size_t mask = ((size_t)1 << (64 - v->shift)) - 1, i = (size_t)((pc * HASH_K) >> v->shift);
	uint64_t second;
	/* the probe's second slot first: nearly every rule not in the first
	 * (693 of 743 calls in bench/suite_test 0), found before the loop's
	 * setup */
	if (capture_rule_in(&rt[(i + 1) & mask], pc, &second, val))
		return second;
	for (int k = 0; k < PROBE && rt != rules_none; k++, i = (i + 1) & mask) {
		uint64_t key;
		if (capture_rule_in(&rt[i], pc, &key, val))
			return key;
		if (!key)
			break;
	}
	uint64_t key = capture_rule_fill(pc, val);
	rule_view_load(v);
	return key;
}

/* The rule at return address pc: one probe inline, where most rules are
 * found (the table is at most a quarter full). */
static inline uint64_t capture_rule(struct rule_view *v, uintptr_t pc, uint64_t *val)
{
	const struct rule_slot *s = &v->rt[(size_t)((pc * HASH_K) >> v->shift)];
	uint64_t key = atomic_load_explicit(&s->key, memory_order_acquire);
	if (likely(key == pc))
		return key;
	if ((key & RULE_PC_MASK) == pc) {
		*val = atomic_load_explicit(&s->val, memory_order_acquire);
		if (likely(atomic_load_explicit(&s->key, memory_order_acquire) == key))
			return key;
	}
	return capture_rule_slow(v, pc, val);
}

/* capture_rule for a walk that keeps the view's address and shift in
 * registers (*rt, *shift): the first slot read from them, where a frame
 * pointer's rule, pc itself, mostly is; any other answer from
 * capture_rule, *rt and *shift then copied from v, which it may move.
 * k: HASH_K, from hash_k() where the caller keeps it in a register. */
static inline __attribute__((always_inline)) uint64_t
capture_rule_in_regs(struct rule_view *v, const struct rule_slot **rt, unsigned *shift,
		     uintptr_t pc, uint64_t *val, uint64_t k)
{
	uint64_t key = atomic_load_explicit(&(*rt)[(size_t)((pc * k) >> *shift)].key,
					    memory_order_acquire);
	if (likely(key == pc))
		return key;
	key = capture_rule(v, pc, val);
	*rt = v->rt;
	*shift = v->shift;
	return key;
}

/* ---- the walk ----------------------------------------------------------
 * A frame of the walk: ret, its return address; sp, the stack pointer
 * of ret's function at the call (the CFA of the frame below); bp, its
 * rbp.  The first frame is the malloc-family function's own, built by
 * us with a frame pointer: its return address is the call site, its CFA
 * fp + 16.  The walks below return the hash_frames() of the return
 * addresses they find, up to max; capture_more's also stores them.  top
 * is me.top. */

/* Where a walk leaves code with frame pointers for good, it goes on to
 * the thread's entry: main's caller and the C library's start-up, or
 * start_thread and clone, CFI steps that every capture of the thread
 * repeats.  So each thread keeps the last such run (its first frame, rbp
 * there, and the words of stack each step read, with what they held): a
 * walk that reaches the same frame with the same rbp, and finds the same
 * words there, would take the same steps, and takes their frames from
 * here.  The check makes it exact, whatever the run: the steps read
 * nothing else.  gen names the run kept, for the cache's entries that
 * rely on it (0 and UINT32_MAX are never one). */
#define RUN_FRAMES 4
#define RUN_KEY 0x94d049bb133111ebull /* keeps a run's key apart from a stack's hash */
#define RUN_WORDS (2 * RUN_FRAMES + 1) /* a step reads 2 at most, the last
					* (which fails) 1: all a kept run read */
struct run {
	uintptr_t ret, sp, bp;
	unsigned nframes, nwords;
	uint32_t gen;
	bool fixed;     /* the thread's entry frames: RUN_FIXED_FRAMES */
	uint64_t key;   /* its frames' hash, odd: capture_known's index key */
	uintptr_t frames[RUN_FRAMES];
	const uintptr_t *at[RUN_WORDS];
	uintptr_t word[RUN_WORDS];
};
static MC_TLS struct run last_run;
/* K^n for a run of n frames (capture_steps_on's join) */
#define K1 HASH_K
#define K2 (K1 * K1)
static const uint64_t run_kpow[RUN_FRAMES + 1] = { 1, K1, K2, K2 * K1, K2 * K2 };
_Static_assert(RUN_FRAMES == 4, "run_kpow's powers");
#undef K1
#undef K2

/* One step, from ret's function to its caller, by the rule key/val:
 * false where the walk ends.  Each step checks what it will read: a
 * frame pointer, above the frame below (sp - 16) and no higher than
 * top, aligned (walk_fp's checks); a CFA above sp, no higher than top +
 * 16, aligned; and the return address found there, 4096 or more.  A CFI
 * step notes the words it read in *run while run is not NULL. */
struct memo_words;
static inline void memo_note(struct memo_words *w, const uintptr_t *at, uintptr_t word);

/* The step through a signal frame (cfi.c's MC_CFI_SIGNAL, for which
 * step() answers false, so that its inlined copies stay as they were:
 * capture_cfi_steps and capture_memo_keep, where every walk's steps
 * through such a frame go, ask capture_signal after it; ret is the C
 * library's __restore_rt, where the handler returns to, and *sp the
 * kernel's ucontext): the interrupted rip, rsp and rbp read from it.
 * The frame after is the interrupted pc, taken as a return address as
 * valgrind takes it (its function and line are the instruction
 * before's, its rule the row before it).  The words lie above sp, no
 * higher than top + 16.  An interrupted rsp off this stack (a handler
 * on an alternate stack: capture_elsewhere's walk; another stack's
 * code interrupted) gives the interrupted frame and ends the walk
 * there, as valgrind's, whose walk stays in the mapping of the stack
 * it starts on: *sp is then past any address, which fails every later
 * step's check.  Never part of a kept run: it reads three words
 * (RUN_WORDS counts two a step), so it spoils the run (nwords past
 * RUN_WORDS); nor of a kept walk (capture_memo_keep keeps none that
 * meets one): such a stack is walked again at each capture.  Out of
 * line: rare. */
static __attribute__((noinline, cold)) bool
capture_signal_step(uint64_t val, uintptr_t *ret, uintptr_t *sp, uintptr_t *bp, uintptr_t top,
		    struct run *run)
{
	uintptr_t base = *sp, sp_off = (uint32_t)val, bp_off = (uint32_t)(val >> 32);
	uintptr_t end = (sp_off + 16 > bp_off + 8 ? sp_off + 16 : bp_off + 8);
	if (sp_off > MC_CFI_SIGNAL_MAX || bp_off > MC_CFI_SIGNAL_MAX || (base & 7) ||
	    base > top + 16 || end > top + 16 - base)
		return false;
	const uintptr_t *at_sp = (const uintptr_t *)(base + sp_off);
	const uintptr_t *at_bp = (const uintptr_t *)(base + bp_off);
	uintptr_t nsp = at_sp[0], pc = at_sp[1], nbp = *at_bp;
	if (run)
		run->nwords = RUN_WORDS + 1;
	if (pc < 4096)
		return false;
	if (nsp <= base || nsp > top + 16 || (nsp & 7))
		nsp = UINTPTR_MAX & ~(uintptr_t)7; /* the walk ends after this frame */
	*ret = pc;
	*sp = nsp;
	*bp = nbp;
	return true;
}

/* After step() said no: the signal frame's step where key is one. */
static inline bool capture_signal(uint64_t key, uint64_t val, uintptr_t *ret, uintptr_t *sp,
				  uintptr_t *bp, uintptr_t top, struct run *run)
{
	return unlikely(key >> RULE_KIND_SHIFT == (RULE_CFI >> RULE_KIND_SHIFT | MC_CFI_SIGNAL)) &&
	       capture_signal_step(val, ret, sp, bp, top, run);
}

static inline __attribute__((always_inline)) bool
step(uint64_t key, uint64_t val, uintptr_t *ret, uintptr_t *sp, uintptr_t *bp, uintptr_t top,
     struct run *run, struct memo_words *w)
{
	uintptr_t f = *bp, r, cfa, nbp;
	if (!(key & RULE_CFI)) {
		if (f <= *sp - 16 || f > top || (f & 7))
			return false;
		r = ((uintptr_t *)f)[1];
		if (w)
			memo_note(w, (uintptr_t *)f + 1, r);
		if (r < 4096)
			return false;
		cfa = f + 16;
		nbp = ((uintptr_t *)f)[0];
		if (w)
			memo_note(w, (uintptr_t *)f, nbp);
	} else {
		int kind = (int)(key >> RULE_KIND_SHIFT & 7);
		int32_t rbp_off = (int32_t)(val >> 32);
		if (kind >= MC_CFI_END) /* the end; a signal frame: capture_signal_step */
			return false;
		cfa = (kind == MC_CFI_SP ? *sp : f) + (uintptr_t)(intptr_t)(int32_t)(uint32_t)val;
		if (cfa <= *sp || cfa > top + 16 || (cfa & 7))
			return false;
		const uintptr_t *at = (const uintptr_t *)cfa - 1;
		r = *at;
		if (run && run->nwords < RUN_WORDS) {
			run->at[run->nwords] = at;
			run->word[run->nwords++] = r;
		}
		if (w)
			memo_note(w, at, r);
		if (r < 4096)
			return false;
		nbp = f;
		if (rbp_off) {
			at = (const uintptr_t *)(cfa + (uintptr_t)(intptr_t)rbp_off);
			if ((uintptr_t)at < *sp)
				return false;
			nbp = *at;
			if (run && run->nwords < RUN_WORDS) {
				run->at[run->nwords] = at;
				run->word[run->nwords++] = nbp;
			}
			if (w)
				memo_note(w, at, nbp);
		}
	}
	*ret = r;
	*sp = cfa;
	*bp = nbp;
	return true;
}

/* A run that ends the walk where the CFI says the thread begins (the
 * return address undefined: _start, clone, __start_context) within
 * RUN_FIXED_FRAMES frames is the thread's entry: main's caller
 * (__libc_start_call_main, then __libc_start_main and _start), the
 * constructors' (call_init), start_thread's (then clone3).  Each of its
 * functions is entered once in the thread's life, at one call site, and
 * stays entered while anything the walk starts from runs above it, so
 * the words its steps read (the return addresses and saved rbp in those
 * frames) cannot change while a walk reaches its first frame at the
 * same sp and rbp: such a run is fixed for the thread, and a cached
 * stack that ends in it is answered by that sp and rbp alone, without
 * the words' compare (run_words_match).  A longer run (a function
 * without a frame pointer of the program's, called from main at two
 * sites with one sp) or one that ends where a check fails is compared
 * word by word as before. */
#define RUN_FIXED_FRAMES 2

/* Do the words the thread's last run read still hold what they held? */
static inline bool run_words_match(const struct run *r)
{
	for (unsigned i = 0; i < r->nwords; i++)
		if (*r->at[i] != r->word[i])
			return false;
	return true;
}

/* Would the walk from (ret, sp, bp) take the thread's last run? */
static inline bool run_matches(const struct run *r, uintptr_t ret, uintptr_t sp, uintptr_t bp)
{
	if (r->ret != ret || r->sp != sp || r->bp != bp || !r->gen)
		return false;
	return run_words_match(r);
}

/* CFI steps from the frame ret, stored as frames[*m - 1] and hashed into
 * *h, whose rule key/val is known not to be a frame pointer's; the frame
 * below it had one, the thread's last run does not start there (the
 * caller, capture_more, takes that run's frames itself), and where the
 * depth allows a step, the first step does not reach a function that
 * keeps its frame pointer (the caller, capture_steps_on, took that one
 * step itself: strdup's caller, fopen's ..., most such runs).  Each step's
 * return address is stored (while the depth allows) and hashed, until
 * the walk ends (0) or reaches a function that keeps its frame pointer
 * (1: its return address in *ret, not stored, its sp and rbp in *sp and
 * *bp).  A run of steps that ends the walk is kept in last_run; one the
 * depth cuts is still walked to its end, unstored, so that the run kept
 * is whole.  *gen: the new run's gen where all the steps were that run,
 * else 0. */
static __attribute__((noinline)) int
capture_cfi_steps(uintptr_t *ret, uintptr_t *sp, uintptr_t *bp, uintptr_t top, int max,
		  uintptr_t *frames, int *m, uint64_t *h, uint64_t key, uint64_t val, uint32_t *gen)
{
	*gen = 0;
	struct rule_view rv;
	rule_view_load(&rv);
	struct run run;
	run.ret = *ret; /* (no more: the struct is large) */
	run.sp = *sp;
	run.bp = *bp;
	run.nframes = run.nwords = 0;
	bool in_run = true;
	for (;;) {
		if (!step(key, val, ret, sp, bp, top, in_run ? &run : NULL, NULL) &&
		    !capture_signal(key, val, ret, sp, bp, top, in_run ? &run : NULL)) {
			/* the run ends the walk: keep it (not one a signal
			 * frame's step spoiled) */
			if (in_run && run.nwords <= RUN_WORDS) {
				run.fixed = (key & RULE_CFI) &&
					    (int)(key >> RULE_KIND_SHIFT & 7) == MC_CFI_END &&
					    run.nframes <= RUN_FIXED_FRAMES;
				run.gen = last_run.gen + 1 == UINT32_MAX ? 1 : last_run.gen + 1;
				run.key = hash_frames(run.frames, (int)run.nframes) ^ RUN_KEY;
				last_run = run;
				*gen = run.gen;
			}
			return 0;
		}
		if (in_run) {
			if (run.nframes == RUN_FRAMES || run.nwords >= RUN_WORDS)
				in_run = false; /* too long to keep */
			else
				run.frames[run.nframes++] = *ret;
		}
		key = capture_rule(&rv, *ret, &val);
		if (!(key & RULE_CFI))
			return *m < max;
		if (*m < max) {
			frames[(*m)++] = *ret;
			*h = hash_step(*h, *ret);
		} else if (!in_run) {
			return 0;
		}
	}
}

/* A frame-pointer step's check of the frame nxt that frame cur links
 * to: above cur, no higher than top, aligned, holding a return address
 * of 4096 or more.  Named walk_fp*: suppressions/memcheck.supp's entries
 * for the walk's reads of what code without frame pointers left name it
 * so, inlined or not. */
static inline __attribute__((always_inline)) bool
walk_fp_link_ok(const uintptr_t *cur, const uintptr_t *nxt, uintptr_t top)
{
	return nxt > cur && (uintptr_t)nxt <= top && !((uintptr_t)nxt & 7) && nxt[1] >= 4096;
}

/* walk_fp_on: frame-pointer steps from the frame whose return address is
 * already hashed into h: cur + 16 is its sp (the frame record below it),
 * next its rbp; left more frames at most, each step checked by
 * walk_fp_link_ok.  Where it stops before the depth, *end_sp and *end_bp
 * are the last frame's sp and rbp (its return address lies at end_sp -
 * 8), for the CFI steps to go on from.
 *
 * The walk is a chain of loads, each frame's address loaded from the
 * one before: its speed is their latency, so the frame pointers stay as
 * they are, loaded and used as a base with nothing in between (checking
 * alignment and the top in one compare on addresses rotated right by 3
 * saves an instruction a frame, but ran slower). */
static inline __attribute__((always_inline)) uint64_t
walk_fp_on(uintptr_t *cur, uintptr_t *next, uint64_t h, unsigned left, uintptr_t top,
	   uintptr_t *end_sp, uintptr_t *end_bp)
{
	uintptr_t ret, *fp = cur;
	uint64_t k = hash_k();
	/* One step from frame cur (the frame record that holds the last
	 * return address hashed) to the frame nxt it links to, which the
	 * step checks; then nxt's own link goes to cur, so the loop below,
	 * unrolled twice, never copies a frame pointer.  It counts frames
	 * by pairs. */
#define STEP(cur, nxt)                                                         \
	if (!walk_fp_link_ok(cur, nxt, top)) {                                 \
		*end_sp = (uintptr_t)cur + 16;                                 \
		*end_bp = (uintptr_t)nxt;                                      \
		goto done;                                                     \
	}                                                                      \
	ret = nxt[1];                                                          \
	h = hash_step_k(h, ret, k);                                            \
	cur = (uintptr_t *)nxt[0];
	if (left & 1) {
		STEP(fp, next)
		uintptr_t *t = fp;
		fp = next;
		next = t;
	}
	if (left & 2) {
		STEP(fp, next)
		STEP(next, fp)
	}
	for (unsigned quads = left / 4; quads; quads--) {
		STEP(fp, next)
		STEP(next, fp)
		STEP(fp, next)
		STEP(next, fp)
	}
#undef STEP
done:
	return h;
}

/* walk_fp: the frame-pointer walk from the malloc-family function's
 * frame fp.  Only its first step checks the stack's low end: each later
 * frame lies above one that passed it.
 *
 * *unlearned is set where the thread's stack is not learned yet: its lo,
 * UINTPTR_MAX, fails the first step's check, so the common path does
 * not test for it.  (A link of UINTPTR_MAX passes that lo, then fails
 * top 0: one frame, as a learned walk gives it too.) */
static inline __attribute__((always_inline)) uint64_t
walk_fp(uintptr_t *fp, uintptr_t top, int max, bool *unlearned, uintptr_t *end_sp,
	uintptr_t *end_bp)
{
	uintptr_t ret = fp[1], *next = (uintptr_t *)fp[0];
	uint64_t h = ret * HASH_K; /* hash_step(0, ret) */
	if ((uintptr_t)next >= me.lo) {
		h = walk_fp_on(fp, next, h, (unsigned)max - 1, top, end_sp, end_bp);
	} else if (unlikely(!top)) {
		*unlearned = true;
		return 0;
	} else {
		*end_sp = (uintptr_t)fp + 16;
		*end_bp = (uintptr_t)next;
	}
	return h;
}

/* This thread's stack bounds, to keep the walk on it.
 *
 * The main thread's are taken as pthread_getattr_np takes them, without
 * its read of /proc/self/maps through stdio (an open, a stat, reads
 * into a malloc'd buffer, a close) and its CPU affinity query, at every
 * measured process's first capture: the top is the end of the page
 * above __libc_stack_end, exactly as there; the low end is the stack
 * rlimit below it.  The C library's is that much below the stack
 * mapping's end instead, a few pages of arguments and environment
 * higher, and no lower than the end of the mapping under the stack;
 * both lie in the gap the kernel keeps free below the stack (at least
 * the rlimit, 128 MiB, where mmap's area starts), so they differ only
 * for a mapping a program fixes there.  With no limit, or one larger
 * than the stack's address, the C library's way. */
extern void *__libc_stack_end;

static bool learn_main_stack(void)
{
	struct rlimit rl;
	uintptr_t pg = mc_page_size();
	uintptr_t end = ((uintptr_t)__libc_stack_end & ~(pg - 1)) + pg;
	if (!__libc_stack_end || mc_tid() != mc_pid() || mc_sys_getrlimit(RLIMIT_STACK, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= end - pg)
		return false;
	/* The process's first thread, on that stack: not the thread that
	 * forked a child, whose own stack the child runs on */
	uintptr_t lo = end - (rl.rlim_cur & ~(pg - 1)), here = (uintptr_t)__builtin_frame_address(0);
	if (here < lo || here >= end)
		return false;
	me.lo = lo;
	me.top = end - 16;
	return true;
}

/* The C library's pthread_getattr_np, not threadattr.c's wrapper (which
 * a call from here would reach first, libmemcheck.so being the first
 * object that defines the name); found once, allocating nothing
 * (elfsym.c). */
int mc_stack_getattr(pthread_t th, pthread_attr_t *attr)
{
	int (*f)(pthread_t, pthread_attr_t *) =
		mc_sym_next_cached("pthread_getattr_np", &getattr_real);
	return f ? f(th, attr) : ENOSYS;
}

/* The calling thread's stack as pthread_getattr_np gives it: false when
 * it cannot be asked now.  That is while the program is itself inside
 * pthread_getattr_np on this thread (threadattr.c): glibc (2.36) holds
 * the thread's lock there while it reallocs the CPU set it asks the
 * kernel for, so a thread whose first allocation is that one, which
 * asked again from the malloc hook, waited for itself for ever (libuv's
 * test thread_stack_size, in count-only and tracking mode alike). */
bool mc_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (mc_self.in_getattr || mc_stack_getattr(pthread_self(), &attr) != 0)
		return false;
	bool ok = pthread_attr_getstack(&attr, &addr, &size) == 0;
	pthread_attr_destroy(&attr);
	if (ok) {
		*lo = (uintptr_t)addr;
		*hi = (uintptr_t)addr + size;
	}
	return ok;
}

/* false: not learned yet, and not to be asked now (mc_stack_bounds) */
static bool learn_stack(void)
{
	int saved = errno;
	uintptr_t lo, hi;
	if (!learn_main_stack() && mc_stack_bounds(&lo, &hi) && hi - lo >= 16) {
		me.lo = lo;
		me.top = hi - 16;
	}
	bool later = !me.top && mc_self.in_getattr;
	if (!me.top) /* unknown: allow only the first frame (none lies at 1 or below) */
		me.lo = me.top = 1;
	errno = saved;
	return !later;
}

/* ---- a refused free's address on the stack: mc_stack_place ---------- */

struct older { pid_t me; int n; };

static bool count_older(pid_t tid, void *arg)
{
	struct older *o = arg;
	o->n += tid < o->me;
	return true;
}

/* valgrind's number of the calling thread: 1 for the process's first,
 * else one more than the threads started before it that still run (a
 * thread takes the lowest number free: the same where none of them has
 * ended) */
static int thread_number(void)
{
	struct older o = { mc_tid(), 0 };
	if (o.me == mc_pid())
		return 1;
	return mc_tasks_each(count_older, &o) ? 1 + o.n : 0;
}

/* The thread of the stack a lies on among the others, blocked in a
 * system call (the kernel shows their stack pointers and pcs): the one
 * whose stack pointer lies closest below a (a red zone of 128 bytes
 * below it), at most 8 MiB below. */
struct other_stack {
	uintptr_t a, sp, pc;
	pid_t me, tid;
	int running;
};

static bool other_stack_of(pid_t tid, void *arg)
{
	struct other_stack *o = arg;
	uintptr_t sp, pc;
	if (tid == o->me)
		return true;
	if (!mc_task_blocked(tid, &sp, &pc)) {
		o->running++;
		return true;
	}
	if (o->a + 128 < sp || o->a - sp >= (8u << 20) || (o->tid && sp <= o->sp))
		return true;
	o->tid = tid;
	o->sp = sp;
	o->pc = pc;
	return true;
}

/* valgrind's "on thread N's stack" for another thread's: its frame
 * walked from the pc and stack pointer of its system call, by the CFI
 * rules (the frame pointer is not known there: a frame the rules do not
 * describe ends the walk); frame 0 its pc's.  Not cold, as
 * mc_stack_place: the rule lookups stay inline. */
static __attribute__((noinline)) void other_place(uintptr_t a, struct mc_stack_place *on)
{
	/* A thread still running (the free's caller has just released it
	 * from a barrier: valgrind runs one thread at a time, and the others
	 * wait where they are) is given up to 50 ms to block. */
	struct other_stack o = { .a = a, .me = mc_tid() };
	for (int tries = 0; tries < 50; tries++) {
		o.running = 0;
		if (!mc_tasks_each(other_stack_of, &o))
			return;
		if (o.tid || !o.running)
			break;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	if (!o.tid)
		return;
	struct older n = { o.tid, 0 };
	if (o.tid != mc_pid() && !mc_tasks_each(count_older, &n))
		return;
	on->thread = o.tid == mc_pid() ? 1 : 1 + n.n;
	uintptr_t ret = o.pc, sp = o.sp, bp = 0, top = o.sp + (8u << 20);
	struct rule_view rv;
	rule_view_load(&rv);
	for (int k = 0; k < mc_opt.stack_depth - mc_opt.valgrind_deeper; k++) {
		uintptr_t r = ret, s = sp, b = bp;
		uint64_t val = 0, key = capture_rule(&rv, r, &val);
		if (!step(key, val, &r, &s, &b, top, NULL, NULL) &&
		    !capture_signal(key, val, &r, &s, &b, top, NULL))
			return;
		if (sp <= a && a < s && s - sp <= (64u << 20)) {
			on->frame = k;
			on->pc = ret;
			return;
		}
		ret = r;
		sp = s;
		bp = b;
	}
}

/* Out of line and rare (a program's refused free, under valgrind's
 * text, after the capture of its stack, which learned the thread's):
 * the walk is capture_elsewhere's, each frame from the stack pointer it
 * had when it called on to its caller's; valgrind's test of a frame's
 * bounds (inside the stack, at most 64 MiB) kept.  Not cold: the rule
 * lookups stay inline, as in the capture's walks (a cold caller made
 * GCC put them out of line, in no group of lib/text-order.ld). */
__attribute__((noinline)) void mc_stack_place(void *fp, uintptr_t a, struct mc_stack_place *on)
{
	on->thread = 0;
	on->frame = -1;
	on->pc = 0;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	/* valgrind's: from the stack pointer less its red zone to the top */
	if (me.lo == UINTPTR_MAX || me.top <= 1 || a + 128 < here || a > me.top + 15) {
		other_place(a, on);
		return;
	}
	on->thread = thread_number();
	const uintptr_t *f = fp;
	uintptr_t ret = f[1], sp = (uintptr_t)fp + 16, bp = f[0];
	struct rule_view rv;
	rule_view_load(&rv);
	for (int k = 0; k + 1 < mc_opt.stack_depth - mc_opt.valgrind_deeper; k++) {
		uintptr_t r = ret, s = sp, b = bp;
		uint64_t val = 0, key = capture_rule(&rv, r, &val);
		if (!step(key, val, &r, &s, &b, me.top, NULL, NULL) &&
		    !capture_signal(key, val, &r, &s, &b, me.top, NULL))
			return;
		if (sp <= a && a < s && s - sp <= (64u << 20)) {
			on->frame = k + 1;
			on->pc = ret;
			return;
		}
		ret = r;
		sp = s;
		bp = b;
	}
}

/* Unwinders that start from here: drop frames up to the call site. */
static int trim_to(uintptr_t site, void **raw, int got, uintptr_t *out, int max)
{
	int start = 0;
	while (start < got && (uintptr_t)raw[start] != site)
		start++;
	if (start == got)
		start = 0;
	int n = 0;
	for (int i = start; i < got && n < max; i++)
		out[n++] = (uintptr_t)raw[i];
	return n;
}

/* The exact unwinders start from here: run them out of line so the
 * common frame-pointer path keeps a small stack frame. */
static __attribute__((noinline)) int capture_slow(void *fp, uintptr_t *frames, int max)
{
	void *raw[MC_MAX_DEPTH + 8];
	/* Their blocks (libunwind's thread data, allocated at a thread's
	 * first unwind and freed by the C library outside the hooks) come
	 * from ownheap.c and go back there. */
	int got = mc_opt.unwinder == MC_UNWIND_LIBUNWIND
		  ? unw_backtrace_fn(raw, max + 8)
		  : backtrace(raw, max + 8);
	return trim_to(((uintptr_t *)fp)[1], raw, got, frames, max);
}

/* What the exact walk adds to a stack walk_fp found, kept with its id in
 * the thread's cache (a slot's gen):
 *   GEN_FP     nothing: every frame's function keeps a frame pointer (but
 *              the last one's where walk_fp reached the depth): the id is
 *              the stack's.
 *   a run's    the thread's last run, from walk_fp's last frame, where
 *   gen        walk_fp stopped: the id is the stack's with the run,
 *              while the run kept is that one and still matches.
 *   GEN_EXACT  anything else (a function without a frame pointer
 *              before the last frame, or one whose callers have frame
 *              pointers again): each capture walks exactly again, and
 *              looks its stack up by that walk's hash, under GEN_FP.
 * The common stacks are of the first two kinds: a program's own frames,
 * then main's caller or start_thread, where walk_fp stops (rbp holds
 * argc there, or 0). */
#define GEN_FP 0
#define GEN_EXACT UINT32_MAX
/* capture_more's cache key for a segment after the first: its hash
 * turned, never the common path's (see there) */
#define SEGMENT_KEY 0x5e9e5e9e5e9e5e9eull

/* Put h's id first in its pair, the stack there moving to the second
 * slot (see capture_slot), or h's entry there changed. */
static void capture_cache_put(uint64_t h, uint32_t id, uint32_t gen)
{
	struct slot *c = capture_slot(h);
	if (c->hash != h)
		*capture_other_slot(h) = *c;
	c->hash = h;
	c->id = id;
	c->gen = gen;
}

/* The slot that holds h, or NULL.  A hit in the other slot swaps the
 * pair, so the stack used last is where the common path looks first. */
static inline const struct slot *capture_cache_find(uint64_t h)
{
	struct slot *c = capture_slot(h);
	if (likely(c->hash == h))
		return c;
	struct slot *o = capture_other_slot(h);
	if (o->hash != h)
		return NULL;
	struct slot t = *o;
	*o = *c;
	*c = t;
	return c;
}

/* A stack stored before, by this thread or another, whose frames walk_fp
 * found (hash h; where it stopped before the depth, end_sp and end_bp):
 * with the depot's walked mark, the exact walk's work was done once for
 * it and need not be done again, nor walk_fp's frames stored.  The mark
 * says what that walk added to walk_fp's frames: nothing (WALKED_FP,
 * indexed by h), or the thread's run from the last of them (WALKED_RUN,
 * indexed by h ^ the run's key).  Both follow from the frames and the
 * run alone: the rules are the return addresses', a run that matches
 * takes the same steps, and the frames (their number too) are h's, a
 * 64-bit hash taken as the stack as the thread's cache takes it.  So a
 * repeated call path that has left the thread's cache (a parser's
 * thousands of paths) costs one index lookup, not a walk storing the
 * frames and a rule lookup a frame.  0 where the index does not know
 * the stack so: capture_more walks exactly. */
#define WALKED_FP 1
#define WALKED_RUN 2
static inline __attribute__((always_inline)) uint32_t capture_known(uint64_t h, uintptr_t end_sp,
								     uintptr_t end_bp)
{
	uint64_t key = h;
	int want = WALKED_FP, walked = 0;
	uint32_t gen = GEN_FP;
	int run = end_sp && run_matches(&last_run, ((uintptr_t *)end_sp)[-1], end_sp, end_bp);
	me.run_at_stop = run;
	if (run) {
		key = h ^ last_run.key;
		want = WALKED_RUN;
		gen = last_run.gen;
	}
	/* mc_depot_known's two looks, the then's inline */
	uint32_t prev = me.prev, id;
	uint64_t e = prev && key && atomic_load_explicit(&mc_depot_then_first,
							 memory_order_relaxed)
		     ? mc_depot_then_find(key, prev) : 0;
	if (likely(e != 0)) {
		id = (uint32_t)e & MC_STACK_ID_MAX;
		walked = (int)(e >> 27 & 3);
	} else {
		id = mc_depot_known_index(key, prev, &walked);
	}
	me.absent = id ? 0 : key; /* no stack of this key (0: none named): see capture_more */
	if (!id || walked != want)
		return 0;
	me.prev = id;
	capture_cache_put(h, id, gen);
	return id;
}

/* The CFI steps from a segment's first function without a frame
 * pointer, frames[k] = *ret (its rule key/val; *sp and *bp the stack
 * pointer and rbp there, frames[0..k] hashed into *h, *m = k + 1): the
 * thread's last run where it starts there (most new stacks: the walk
 * ends in main's caller or start_thread), its frames taken here, in
 * registers, without the steps' call (run: whether it starts there,
 * where known, else -1); else capture_cfi_steps.  Its
 * result: 0, the walk ended (*gen: the run's gen where the steps were
 * that run, else 0); 1, the next segment starts at *ret. */
static inline __attribute__((always_inline)) int
capture_steps_on(uintptr_t *ret, uintptr_t *sp, uintptr_t *bp, uintptr_t top, int max,
		 uintptr_t *frames, int *m, uint64_t *h, uint64_t key, uint64_t val, uint32_t *gen,
		 int run, struct rule_view *rv)
{
	if (run < 0 ? run_matches(&last_run, *ret, *sp, *bp) : run) {
		unsigned rn = last_run.nframes;
		if (likely(*m + (int)rn <= max)) {
			/* whole: its RUN_FRAMES words copied (frames has room
			 * past max for them), its hash joined as hash_frames's
			 * sum: the frames before times K^rn, plus the run's own
			 * (its key without RUN_KEY) */
			_Static_assert(RUN_FRAMES == 4, "the run's words copied");
			uintptr_t *to = frames + *m; /* (memcpy is a call here) */
			to[0] = last_run.frames[0];
			to[1] = last_run.frames[1];
			to[2] = last_run.frames[2];
			to[3] = last_run.frames[3];
			*m += (int)rn;
			*h = *h * run_kpow[rn] + (last_run.key ^ RUN_KEY);
		} else {
			for (unsigned i = 0; i < rn && *m < max; i++) {
				frames[(*m)++] = last_run.frames[i];
				*h = hash_step(*h, last_run.frames[i]);
			}
		}
		*gen = last_run.gen;
		return 0;
	}
	/* One step to a function that keeps its frame pointer (strdup's
	 * caller, fopen's ...: most such runs of steps), here, without
	 * capture_cfi_steps's call; taken with no notes of the words it
	 * read: no run is kept from it.  Any other step is taken again
	 * there, from where it started: it reads the same words. */
	uintptr_t r1 = *ret, sp1 = *sp, bp1 = *bp;
	uint64_t val1 = 0;
	if (*m < max && step(key, val, &r1, &sp1, &bp1, top, NULL, NULL) &&
	    !(capture_rule(rv, r1, &val1) & RULE_CFI)) {
		*ret = r1;
		*sp = sp1;
		*bp = bp1;
		*gen = 0;
		return 1;
	}
	return capture_cfi_steps(ret, sp, bp, top, max, frames, m, h, key, val, gen);
}

/* capture_more's segments after the first, from frames[s] (hk: the hash
 * of frames[0..s]), whose frame record is cur, its link nxt.  No walk_fp
 * of a later segment was made: one walk does its work and the exact
 * walk's at once, each frame's rule, then walk_fp's check of the link (a
 * frame pointer's step), the frame stored and hashed.  Where it stops
 * as walk_fp would (stopped, or the depth) with no function without a
 * frame pointer before, hk is walk_fp's hash of the segment, and the
 * cache is asked by it (turned: SEGMENT_KEY), as the common path asks
 * by its own.  Where such a function comes first, walk_fp's hash would
 * be of frames past it, which the cache never marks but GEN_EXACT (the
 * rules are the return addresses'): not asked, nor told.  (A walk_fp of
 * the segment, the cache asked, then this walk again, was ~110
 * instructions more for each strdup caller of bench/suite_test.)  Its
 * own function: capture_more's first segment, every new stack's, keeps
 * its registers. */
static __attribute__((noinline)) uint32_t capture_later(uintptr_t *frames, int s, int max,
							 uintptr_t top, uint64_t hk, uintptr_t *cur,
							 uintptr_t *nxt)
{
	struct rule_view rv;
	rule_view_load(&rv);
	const struct rule_slot *rt = rv.rt;
	unsigned shift = rv.shift;
	for (;;) {
		uint64_t key = 0, val = 0;
		bool cfi = false, stopped = false;
		uintptr_t pc = frames[s];
		uintptr_t *fr = frames + s, *fend = frames + max - 1; /* fr: frames[k] */
		/* Unrolled twice, the frame record and its link in a and b
		 * by turns (as walk_fp_on's): a step from record A, linked to
		 * B, leaves B the record and B's link in A, so no frame
		 * pointer is copied (27 -> 24 instructions a frame).  Each
		 * exit names the record and its link in cur and nxt. */
		uintptr_t *a = cur, *b = nxt;
		uint64_t kk = hash_k();
#define LATER_STEP(A, B)                                                       \
	key = capture_rule_in_regs(&rv, &rt, &shift, pc, &val, kk);            \
	if (unlikely(key != pc) && (key & RULE_CFI)) {                         \
		cfi = true;                                                    \
		stopped = !walk_fp_link_ok(A, B, top);                         \
		cur = A;                                                       \
		nxt = B;                                                       \
		goto segment_end;                                              \
	}                                                                      \
	/* walk_fp_link_ok's checks, a branch each (gcc ANDs its &&        \
	 * together in flags here) */                                          \
	if (unlikely(B <= A) || unlikely((uintptr_t)B > top) ||                \
	    unlikely((uintptr_t)B & 7) || unlikely(B[1] < 4096)) {             \
		stopped = true;                                                \
		cur = A;                                                       \
		nxt = B;                                                       \
		goto segment_end;                                              \
	}                                                                      \
	*++fr = pc = B[1];                                                     \
	hk = hash_step_k(hk, pc, kk);                                          \
	A = (uintptr_t *)B[0];                                                 \
	if (unlikely(fr >= fend)) {                                            \
		cur = B;                                                       \
		nxt = A;                                                       \
		goto segment_end;                                              \
	}
		if (fr < fend) {
			for (;;) {
				LATER_STEP(a, b)
				LATER_STEP(b, a)
			}
		}
#undef LATER_STEP
	segment_end:;
		int k = (int)(fr - frames), m = k + 1;
		uint64_t ck = hk ^ SEGMENT_KEY;
		if (stopped || !cfi) {
			const struct slot *c = capture_cache_find(ck);
			if (c && c->gen == GEN_FP)
				return c->id;
			if (c && c->gen != GEN_EXACT && c->gen == last_run.gen && stopped &&
			    run_matches(&last_run, pc, (uintptr_t)cur + 16, (uintptr_t)nxt))
				return c->id;
		}
		if (!cfi) { /* walk_fp's frames, hk their hash, are the stack */
			uint32_t id = mc_depot_intern(hk, frames, m);
			capture_cache_put(ck, id, GEN_FP);
			return id;
		}
		uintptr_t ret = frames[k], sp = (uintptr_t)cur + 16, bp = (uintptr_t)nxt;
		uint32_t gen;
		uint64_t hj = hk; /* (hk's address not taken: it stays in a register above) */
		if (!capture_steps_on(&ret, &sp, &bp, top, max, frames, &m, &hj, key, val, &gen, -1, &rv)) {
			uint32_t id = mc_depot_intern(hj, frames, m);
			if (stopped) /* (else no key: see above) */
				capture_cache_put(ck, id, gen ? gen : GEN_EXACT);
			return id;
		}
		/* the next segment, from the function with a frame pointer
		 * the steps reached: its return address ret, its sp and rbp */
		s = m;
		frames[s] = ret;
		hk = hash_step(hj, ret);
		cur = (uintptr_t *)(sp - 16);
		nxt = (uintptr_t *)bp;
		rt = rv.rt;
		shift = rv.shift;
	}
}

/* A stack whose walk ended in CFI steps, stored: as the run the
 * thread's cache follows where gen (the walk's generation, 0: none;
 * absent: the index had no stack of key wkey) and then the stack before
 * it in me.prev, else as an exact stack.  The common end of
 * capture_more's and capture_leaf's walks. */
static inline __attribute__((always_inline)) uint32_t
capture_store_end(uint64_t ck, uint64_t hk, const uintptr_t *frames, int m, uint32_t gen,
		  bool absent, uint64_t wkey)
{
	uint32_t id = gen ? mc_depot_intern_walked(hk, frames, m, absent, wkey, WALKED_RUN, me.prev)
			  : mc_depot_intern(hk, frames, m);
	capture_cache_put(ck, id, gen ? gen : GEN_EXACT);
	if (gen)
		me.prev = id;
	return id;
}

/* A capture inside a signal handler (mc_self.own_frames: signals.c's
 * trampoline) whose stack the common walks cut short:
 *  - its frame off the thread's stack, on the program's alternate stack
 *    (sigaltstack, SA_ONSTACK): walk_fp's first link failed the bounds,
 *    and the stack was the handler's frame alone (valgrind: the handler,
 *    the signal return and the interrupted function).  The kernel names
 *    that stack in use (SS_ONSTACK), and the walk steps within it,
 *    through the signal frame to the interrupted pc, where it ends as
 *    valgrind's does, whose walk stays in the mapping of the stack it
 *    starts on (capture_signal_step);
 *  - a handler fatal.c moved off memcheck's own alternate stack to the
 *    interrupted one (SA_ONSTACK, no stack of the program's:
 *    mc_fatal_beside, mc_self.moved_uc): its caller is memcheck's stack
 *    switch, whose link goes to memcheck's stack, and the stack was the
 *    handler's frames alone, where bare's kernel, and valgrind, put the
 *    frame on the interrupted stack, the signal return and the
 *    interrupted frames under it.  At that frame (libmemcheck's code,
 *    left out of the stack stored) the walk takes the kernel's frame:
 *    its return address (the restorer, the word before the ucontext)
 *    and the interrupted registers, and goes on on this stack.
 * Neither the thread's cache nor the depot's walked index is asked or
 * told: their keys are walk_fp's hash, the same for every such stack of
 * one handler.  0 where neither holds (capture_more walks as before). */
static __attribute__((noinline, cold)) uint32_t capture_elsewhere(uintptr_t *fp, int max)
{
	const ucontext_t *uc = mc_self.moved_uc;
	uintptr_t top = me.top;
	if (!top) /* the stack not learned: not after the common path's walk */
		return 0;
	if ((uintptr_t)fp - me.lo > me.top - me.lo) {
		stack_t ss;
		int saved = errno;
		bool on = syscall(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
			  (uintptr_t)fp - (uintptr_t)ss.ss_sp < ss.ss_size &&
			  ss.ss_size - ((uintptr_t)fp - (uintptr_t)ss.ss_sp) >= 16;
		errno = saved;
		if (!on)
			return 0;
		top = (uintptr_t)ss.ss_sp + ss.ss_size - 16;
		uc = NULL;
	} else if (!uc) {
		return 0;
	}
	uintptr_t frames[MC_MAX_DEPTH], ret = fp[1], sp = (uintptr_t)fp + 16, bp = fp[0];
	struct rule_view rv;
	rule_view_load(&rv);
	int n = 0;
	frames[n++] = ret;
	while (n < max) {
		uint64_t val = 0, key = capture_rule(&rv, ret, &val);
		if (!step(key, val, &ret, &sp, &bp, top, NULL, NULL) &&
		    !capture_signal(key, val, &ret, &sp, &bp, top, NULL)) {
			uintptr_t usp = uc ? (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] : 0;
			if (!uc || ret - mc_text_lo >= mc_text_len || usp <= sp || usp > top + 16)
				break;
			frames[n++] = ((const uintptr_t *)uc)[-1]; /* rt_sigframe's pretcode */
			ret = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
			sp = usp;
			bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
			uc = NULL;
			if (n == max || ret < 4096)
				break;
		}
		frames[n++] = ret;
	}
	return mc_depot_intern(hash_frames(frames, n), frames, n);
}

/* A stack the thread's cache does not have as GEN_FP, or whose run no
 * longer holds: the exact walk, a segment at a time.  A segment is
 * walk_fp's from a frame whose function keeps its frame pointer, stored
 * and hashed on from the frames before it; the cache, keyed by that
 * hash, says what the exact walk does with it: nothing (GEN_FP: the id
 * is the stack's), the thread's run from where walk_fp stopped (a run's
 * gen), or anything else (GEN_EXACT).  The first segment's hash is the
 * common path's, h, with c its cache slot or NULL, and the segment is
 * walked again, storing its frames and looking up each one's rule
 * before stepping from it (one probe of the rule table, inline); a
 * later segment is walked once, each frame's rule and walk_fp's check
 * in one step, its hash asked of the cache where it ends as walk_fp's:
 * at the first function without a frame pointer CFI steps go on, and
 * where they reach a function with one, the next segment begins.  So a
 * block from strdup costs a rule lookup and a CFI step more than one
 * from the program's own code, walks no further on the chain of rbp
 * values strdup left, and a repeated call path reads no call-frame
 * information.  The depot is asked here, not on the common path: the
 * cache is empty until this fills it. */
static __attribute__((noinline)) uint32_t capture_more(void *fp, int max, uint64_t h,
							const struct slot *c, uintptr_t fp_end_sp,
							uintptr_t fp_end_bp)
{
	/* inside a handler memcheck wrapped: one test here (capture_more
	 * runs for every new stack: the two others were +89 K instructions
	 * of tree_bench 20000's 70.2 M, callgrind) */
	if (unlikely(mc_self.own_frames)) {
		uint32_t id = capture_elsewhere(fp, max);
		if (id)
			return id;
	}
	/* A stack the cache marks GEN_EXACT was never indexed under walk_fp's
	 * hash (capture_known's keys): its first function without a frame
	 * pointer comes before walk_fp's last frame, and the rules are the
	 * return addresses'.  Where capture_known finds no stack of key h,
	 * the depot's first lookup of the frames below is not made; nor
	 * where it finds none marked with the run it ends with (the key a
	 * stack stored with that run is marked under): nearly always a new
	 * stack, which that lookup, made without the lock, cannot find, and
	 * the lookup under the lock finds any other (a stack stored by
	 * another walk, unmarked). */
	uint64_t absent = 0;
	/* whether the thread's last run starts where walk_fp stopped, as
	 * capture_known found (-1: not asked): where the first segment stops
	 * there too, the same frame, sp and rbp.  Asked here where walk_fp
	 * stopped before the depth; where it reached the depth, capture_lost
	 * asked just before. */
	int run_at_stop = -1;
	if (!c || c->gen != GEN_EXACT) {
		if (fp_end_sp) {
			uint32_t known = capture_known(h, fp_end_sp, fp_end_bp);
			if (known)
				return known;
		}
		absent = me.absent;
		run_at_stop = me.run_at_stop;
	}
	uintptr_t frames[MC_MAX_DEPTH + RUN_FRAMES], top = me.top; /* (capture_steps_on) */
	if (!top) /* the stack not learned: not after the common path's walk */
		return 0;
	uintptr_t *cur = fp, *nxt = (uintptr_t *)cur[0];
	frames[0] = cur[1];
	uint64_t hk = hash_step(0, frames[0]); /* the hash of frames[0..k] */
	struct rule_view rv;
	rule_view_load(&rv);
	/* The cache key: the common path's, h, for the first segment; for a
	 * later one its hash turned (SEGMENT_KEY).  A later segment's hash
	 * is of exact frames before walk_fp's, which another capture's
	 * walk_fp alone may find: one indirect call site calling strdup
	 * straight, then a wrapper with a frame pointer that calls strdup
	 * (walk_fp skips the wrapper's call, whose return address no frame
	 * record holds).  Under h itself the second took the first's id
	 * from the common path (unit_stacks: fp_indirect_call_skipping_a_frame). */
	uint64_t ck = h;
	/* The first segment's frames, each one's rule looked up before
	 * stepping from it: frames[k] is stored, cur is the frame record
	 * that holds it, nxt its link.  The walk stops where walk_fp stops,
	 * or at the first function without a frame pointer, not walking on
	 * the chain walk_fp follows past it (stopped: where walk_fp stops).
	 * Where walk_fp stopped is known, at the frame record fp_end_sp - 16
	 * (never a record where fp_end_sp is 0: the depth), and these steps
	 * read the same words of the thread's own stack, so their checks
	 * (walk_fp_link_ok, ~8 instructions a frame) are not made again: a
	 * step is stopped where cur is that record.  (Frame records rise
	 * strictly, so no earlier one is.) */
	uint64_t key = 0, val = 0;
	bool cfi = false, stopped = false;
	uintptr_t pc = frames[0];
	/* Each frame's test, as few instructions as it takes: the rule
	 * table's first slot holding pc itself (a frame pointer's rule: most
	 * frames) read from the view's address and shift in registers,
	 * copied from rv after any call that may move it; only another
	 * answer calls capture_rule. */
	const struct rule_slot *rt = rv.rt;
	unsigned shift = rv.shift;
	uintptr_t *fr = frames, *fend = frames + max - 1; /* fr: frames[k] */
	uintptr_t stop_rec = fp_end_sp - 16;
	/* Unrolled twice, the frame record and its link in a and b by turns
	 * (as capture_later's), the depth tested once a pair: a pair is
	 * taken while both its frames fit, the rest by the loop after it
	 * (the same steps, the depth tested at each). */
	uintptr_t *a = cur, *b = nxt;
#define FIRST_STEP(A, B)                                                       	if (unlikely((uintptr_t)A == stop_rec)) {                              		cur = A;                                                       		nxt = B;                                                       		goto at_stop;                                                  	}                                                                      	key = capture_rule_in_regs(&rv, &rt, &shift, pc, &val, HASH_K);        	if (unlikely(key != pc) && (key & RULE_CFI)) {                         		cfi = true;                                                    		cur = A;                                                       		nxt = B;                                                       		goto first_end;                                                	}                                                                      	*++fr = pc = B[1];                                                     	A = (uintptr_t *)B[0];
	while (fr + 2 <= fend) {
		FIRST_STEP(a, b)
		FIRST_STEP(b, a)
	}
	cur = a;
	nxt = b;
	while (fr < fend) {
		FIRST_STEP(cur, nxt)
		uintptr_t *t = cur;
		cur = nxt;
		nxt = t;
	}
#undef FIRST_STEP
	goto first_end;
at_stop:
	key = capture_rule(&rv, pc, &val);
	stopped = true;
	cfi = key & RULE_CFI;
first_end:;
	int k = (int)(fr - frames), m = k + 1;
	if (!cfi) { /* walk_fp's frames, h their hash, are the stack */
		uint32_t id = mc_depot_intern_walked(h, frames, m, h && absent == h, h, WALKED_FP,
						     me.prev);
		capture_cache_put(ck, id, GEN_FP);
		me.prev = id;
		return id;
	}
	/* The hash of frames[0..k]: walk_fp's, h, where these steps went as
	 * far as it did (to where it stopped); else (a function without a
	 * frame pointer before that) hashed on from frames[0] here, not a
	 * step at a time above. */
	if (stopped)
		hk = h;
	else
		for (int i = 1; i <= k; i++)
			hk = hash_step(hk, frames[i]);
	uintptr_t ret = frames[k], sp = (uintptr_t)cur + 16, bp = (uintptr_t)nxt;
	uint32_t gen;
	if (!capture_steps_on(&ret, &sp, &bp, top, max, frames, &m, &hk, key, val, &gen,
			      stopped ? run_at_stop : -1, &rv)) {
		uint64_t wkey = h ^ last_run.key;
		/* a run only where stopped (last_run is that run) */
		return capture_store_end(ck, hk, frames, m, stopped ? gen : 0,
					 wkey && absent == wkey, wkey);
	}
	if (!c || c->gen != GEN_EXACT)
		capture_cache_put(ck, 0, GEN_EXACT);
	/* the next segment, from the function with a frame pointer the
	 * steps reached: its return address ret, its sp and rbp */
	frames[m] = ret;
	return capture_later(frames, m, max, top, hash_step(hk, ret), (uintptr_t *)(sp - 16),
			     (uintptr_t *)bp);
}

/* A stack the thread's cache has lost, or whose run no longer holds
 * (not GEN_EXACT): capture_known's one lookup, in a function of its own
 * that saves few registers and keeps no frames' array; capture_more's
 * walk only where it does not know the stack.  (It was capture_more's
 * first step: its frame of ~700 bytes and six registers saved for every
 * capture of a stack the cache lost, ~25 instructions of the ~90 a
 * known stack's lookup cost there.) */
/* A stack the thread's cache has lost (not GEN_EXACT) whose walk_fp
 * reached the depth (a deep stack: no run to ask about): capture_known,
 * in a function of its own that keeps no frames' array, then
 * capture_more's walk where it does not know the stack.  The arguments
 * capture_more needs are left in me first: the lookup has the registers
 * to itself, none saved.  (It was capture_more's first step: a frame of
 * ~700 bytes and six registers saved for every capture of a stack the
 * cache lost, ~40 instructions of each.  A stack that ends before the
 * depth is mostly new, and stays with capture_more: two functions' entry
 * and exit cost a new stack more than one.) */
static __attribute__((noinline)) uint32_t capture_lost(void *fp, int max, uint64_t h,
							const struct slot *c)
{
	me.lost_fp = fp;
	me.lost_max = max;
	me.lost_c = c;
	uint32_t id = capture_known(h, 0, 0);
	if (likely(id != 0))
		return id;
	return capture_more(me.lost_fp, me.lost_max, h, me.lost_c, 0, 0);
}

/* ---- the thread's exact walks, kept ------------------------------------
 * A stack the cache marks GEN_EXACT (a function without a frame pointer
 * before walk_fp's last frame: every frame of Debian's /bin/date, the C
 * library's strdup, fopen, setlocale ...) was walked exactly again at
 * every capture: capture_more's second walk storing the frames, a rule
 * lookup a frame, the CFI steps, and the depot's lookup by frames
 * (~800 instructions a capture for /bin/date).  The walk's result is a
 * function of the registers it starts from, the words it reads and the
 * rules of the return addresses it finds, so the thread keeps its last
 * exact walks (capture_memo_*: where each started, the words its steps
 * read, the id), each in a slot chosen by the first return address and
 * the frame record's address (a call path repeated at one depth, as a
 * loop repeats it), and a capture that finds one there from the same
 * frame compares those words (capture_memo_walk): all as they were, the
 * steps would read the same, check alike and find the same frames, so
 * the stack is the one the exact walk gives, with no step, rule lookup,
 * hash, store or depot lookup.  A walk is kept only where its frames
 * are those the depot holds for the id capture_more found (a check of
 * this walk against capture_more's, made once a kept walk). */
#define MEMO_SLOTS 32
#define MEMO_DEPTH 16
#define MEMO_WORDS (2 * MEMO_DEPTH) /* a step reads 2 at most; a walk of n
				     * frames takes n steps at most */
struct memo {
	uint32_t id;  /* 0: empty */
	uint8_t nwords, max;
	bool bp_live;  /* fp[0] steers a step: compared */
	uint8_t first; /* a pair's first slot only: which of the two was used
			* last (the one tried first, the other replaced): no
			* slots moved for it */
	uintptr_t fp, bp, ret; /* where the walk started: fp, fp[0], fp[1] */
	int32_t off[MEMO_WORDS]; /* each word the walk read: its address - fp */
	uintptr_t word[MEMO_WORDS]; /* and what it held */
};
_Static_assert(sizeof(struct memo) == 416, "the kept walks' sizes said below and in doc/costs.md");

/* The words a walk being kept reads, noted by step(): n counts them all
 * (more than MEMO_WORDS, or one too far from fp for an offset: not kept). */
struct memo_words {
	unsigned n;
	bool far;
	uintptr_t fp;
	struct memo *m;
};

static inline void memo_note(struct memo_words *w, const uintptr_t *at, uintptr_t word)
{
	intptr_t off = (intptr_t)((uintptr_t)at - w->fp);
	if (off != (int32_t)off)
		w->far = true;
	else if (w->n < MEMO_WORDS) {
		w->m->off[w->n] = (int32_t)off;
		w->m->word[w->n] = word;
	}
	w->n++;
}

/* The kept walks are not in the thread's TLS block: 8,960 bytes a thread
 * there made libmemcheck's PT_TLS 0x2730 bytes, more than the C library
 * keeps free for a dlopen of a library with initial-exec TLS ("cannot
 * allocate memory in static TLS block").  They are a block a thread
 * takes from a pool on its first kept walk, its index in me.memo (in
 * what was that struct's padding: the TLS block keeps its size).  The
 * pool is one lazy reservation made at start-up (mc_map_lazy: carved,
 * its resident pages measured with mincore as memcheck's own, never the
 * program's), MEMO_THREADS blocks of 13,336 bytes (417 KiB of address
 * space); a pair of its slots is written, never read, when the first walk
 * is kept there (one write fault a page, not two: at[]).  Taking
 * one locks nothing and calls only tgkill, so a capture in a signal handler may take it (as the cache,
 * the block is the thread's: captures never nest on one thread, the
 * guard being up during each).  A block is its owner's (a thread id)
 * until that thread is gone: memcheck has no hook at a thread's end
 * here, so a thread that finds every block owned asks which owners have
 * ended (tgkill with signal 0: ESRCH) and takes the first such, cleared;
 * where none has, it keeps no walks (MEMO_NONE: capture_more's walk,
 * the same stacks).  So at most MEMO_THREADS x 13,336 bytes stay resident
 * however many threads come and go. */
#define MEMO_THREADS 32
#define MEMO_NONE UINT32_MAX
/* A block's pairs of slots (at[k]: pair k) written by its owner, the
 * only thread that reads or writes it: a pair not yet written is not
 * read by a capture (a read would map the zero page, a fault that the
 * first walk kept there then pays again), and its first walk kept is
 * stored without reading it (the pair's other slot's id cleared: one
 * store, no read), so each page is a write fault, once.  A block was
 * populated whole when taken, 4 pages, where a short process keeps a
 * few walks on one or two of them (a libyaml parser run: 1 page of 4
 * written; bench/suite_test: none); then a pair's page or two when its
 * first walk was kept, 16 madvise calls a thread at most, most of them
 * for pages already resident (a measured /bin/date: 11 calls for 4
 * pages).  The pool is a lazy mapping (mincore counts its resident
 * pages as memcheck's own), so nothing is counted ahead of the faults;
 * here a one-page populate costs what the page's write fault does
 * (doc/costs.md r-session57-pop57). */
struct memo_block {
	/* Pair k's place among the pairs written (1 + it; 0: none yet),
	 * given in the order the pairs take their first walks: a few walks
	 * spread by hash over all 16 pairs wrote every page of the block (a
	 * measured /bin/date: 7 pairs, 4 pages; bench/suite_test 0: 11, 4);
	 * laid out densely they write the first pages only (2; 3).  On the
	 * block's first page, which the first walk kept writes. */
	uint8_t at[MEMO_SLOTS / 2];
	uint8_t next; /* pairs placed */
	struct memo m[MEMO_SLOTS];
};
_Static_assert(sizeof(struct memo_block) == 13336, "the block's size said above and in doc/costs.md");
static struct memo_block *memo_pool;
static _Atomic pid_t memo_owner[MEMO_THREADS];

/* Under an address-space limit memcheck may not move (ownmap.c's
 * mc_map_tight), MEMO_TIGHT blocks (52 KiB, where 416 KiB were that
 * much less room for the program), the others' owners an id no thread
 * has (-1: tgkill says EINVAL, not ESRCH), so that no thread takes one:
 * a fifth thread keeps no walks, as a thirty-third does.  Out of line,
 * with the mapping: start-up's code tests one flag. */
#define MEMO_TIGHT 4
static __attribute__((noinline, cold)) void memo_tight_owners(void)
{
	for (int i = MEMO_TIGHT; i < MEMO_THREADS; i++)
		atomic_store_explicit(&memo_owner[i], -1, memory_order_relaxed);
}

static __attribute__((noinline, cold)) struct memo_block *memo_pool_tight(void)
{
	memo_tight_owners();
	return mc_map_lazy(MEMO_TIGHT * sizeof *memo_pool);
}

static void memo_pool_init(void)
{
	if (!memo_pool && mc_opt.track && mc_opt.unwinder == MC_UNWIND_FP && mc_opt.stack_depth > 0)
		memo_pool = mc_map_is_tight() ? memo_pool_tight()
					      : mc_map_lazy(MEMO_THREADS * sizeof *memo_pool);
}

/* Block i taken by this thread (its owner already set). */
static __attribute__((noinline)) struct memo_block *memo_take(int i)
{
	struct memo_block *b = &memo_pool[i];
	/* No pair placed: a fresh block's, or an ended thread's walks (a
	 * pair is read only once placed, and its first walk clears its
	 * other slot).  Written, not read first: the page's one fault. */
	memset(b, 0, offsetof(struct memo_block, m));
	me.memo = (uint32_t)i + 1;
	return b;
}

/* The thread's block of kept walks, taken on its first use; NULL where
 * there is none. */
static __attribute__((noinline)) struct memo_block *memo_block_take(void)
{
	if (me.memo == MEMO_NONE || !memo_pool)
		return NULL;
	pid_t tid = mc_tid(), pid = mc_pid();
	for (int i = 0; i < MEMO_THREADS; i++) {
		pid_t free_ = 0;
		if (atomic_compare_exchange_strong(&memo_owner[i], &free_, tid))
			return memo_take(i);
	}
	int saved = errno;
	for (int i = 0; i < MEMO_THREADS; i++) {
		pid_t was = atomic_load(&memo_owner[i]);
		if (was && was != tid && syscall(SYS_tgkill, pid, was, 0) != 0 && errno == ESRCH &&
		    atomic_compare_exchange_strong(&memo_owner[i], &was, tid)) {
			errno = saved;
			return memo_take(i);
		}
	}
	errno = saved;
	me.memo = MEMO_NONE;
	return NULL;
}

/* The thread's block, NULL where it has none (yet). */
static inline struct memo_block *memo_block(void)
{
	uint32_t i = me.memo;
	return i && i != MEMO_NONE ? &memo_pool[i - 1] : NULL;
}

/* The pair of slots a walk from fp is kept in. */
static inline unsigned memo_pair(const uintptr_t *fp)
{
	return (unsigned)(((fp[1] + (uintptr_t)fp) * HASH_K) >> 60);
}

/* The two slots of the pair placed at (at, 1 + its place: memo_block's
 * at[]). */
static inline struct memo *memo_pair_slots(struct memo_block *b, unsigned at)
{
	return &b->m[2 * (at - 1)];
}

int mc_stack_kept_walks(void)
{
	const struct memo_block *b = memo_block();
	int n = 0;
	for (int k = 0; b && k < b->next; k++)
		n += (b->m[2 * k].id != 0) + (b->m[2 * k + 1].id != 0);
	return n;
}


/* The top of a kept walk's first step, as capture_more's: 0 (the walk
 * ends) where a frame-pointer step starts from a link below lo. */
static inline uintptr_t memo_first_top(uint64_t key, uintptr_t bp, uintptr_t top)
{
	return !(key & RULE_CFI) && bp < me.lo ? 0 : top;
}

/* Kept walk m, from fp: its id, if the stack is still its, else 0.
 * The walk is a function of where it starts (fp, and the rbp and return
 * address there), the thread's stack bounds (its own: the block is the
 * thread's), the rules of the return addresses it finds (a rule never
 * changes for its address: see the file's head) and the words it reads:
 * where it starts from the same fp with the same two words there, and
 * every word it read holds what it held, each step reads the same
 * words, checks them alike and finds the same frame, and the last ends
 * the walk as it did (or the depth cuts it, max the same).  So those
 * words are compared, not stepped through again (the run's argument,
 * run_words_match: ~30 instructions a CFI step -> ~4 a word read). */
static inline uint32_t capture_memo_walk(const struct memo *m, uintptr_t *fp, int max)
{
	if (!m->id || m->max != max || m->ret != fp[1] || m->fp != (uintptr_t)fp ||
	    (m->bp_live && m->bp != fp[0]))
		return 0;
	for (unsigned i = 0; i < m->nwords; i++)
		if (*(const uintptr_t *)((uintptr_t)fp + (uintptr_t)(intptr_t)m->off[i]) != m->word[i])
			return 0;
	return m->id;
}

/* The kept walk of pair m from fp that is still the stack's: its id,
 * else 0.  The slot used last is tried first; a hit in the other makes
 * it the one used last, as the cache's swap does. */
static __attribute__((noinline)) uint32_t capture_memo_find(struct memo *m, uintptr_t *fp, int max)
{
	unsigned f = m[0].first;
	uint32_t id = capture_memo_walk(m + f, fp, max);
	if (id || !(id = capture_memo_walk(m + (f ^ 1), fp, max)))
		return id;
	m[0].first = (uint8_t)(f ^ 1);
	return id;
}

/* Keep the exact walk from fp, whose stack capture_more found as id:
 * walked again, each rule looked up, the words each step reads noted,
 * and kept only where its frames are id's in the depot.  A word read as
 * the caller's rbp is kept only where a later step uses rbp before
 * another such word replaces it (a frame-pointer step, or a CFA from
 * rbp): code without frame pointers keeps anything in rbp (a counter, a
 * pointer), which changes from call to call and steers no step. */
static __attribute__((noinline)) void capture_memo_keep(uintptr_t *fp, int max, uint32_t id)
{
	if (!id || max > MEMO_DEPTH)
		return;
	struct memo m = { .id = id, .max = (uint8_t)max, .fp = (uintptr_t)fp, .bp = fp[0],
			  .ret = fp[1] };
	struct memo_words w = { .fp = (uintptr_t)fp, .m = &m };
	uintptr_t frames[MEMO_DEPTH];
	/* each step's first word noted, and whether it used rbp */
	uint8_t first[MEMO_DEPTH + 1];
	bool uses_bp[MEMO_DEPTH];
	struct rule_view rv;
	rule_view_load(&rv);
	uintptr_t ret = fp[1], sp = (uintptr_t)fp + 16, bp = fp[0], top = me.top;
	frames[0] = ret;
	int n = 1, steps = 0;
	for (;;) {
		if (n == max)
			break;
		uint64_t val = 0, key = capture_rule(&rv, ret, &val);
		int kind = (int)(key >> RULE_KIND_SHIFT & 7);
		uintptr_t t = n == 1 ? memo_first_top(key, bp, top) : top;
		first[steps] = (uint8_t)(w.n < MEMO_WORDS ? w.n : MEMO_WORDS);
		uses_bp[steps++] = !(key & RULE_CFI) || (kind != MC_CFI_SP && kind != MC_CFI_END);
		if (unlikely(key >> RULE_KIND_SHIFT == (RULE_CFI >> RULE_KIND_SHIFT | MC_CFI_SIGNAL)))
			return; /* a signal frame: not kept, walked at each capture */
		bool on = step(key, val, &ret, &sp, &bp, t, NULL, &w);
		if (!on)
			break;
		frames[n++] = ret;
	}
	if (w.far || w.n > MEMO_WORDS)
		return;
	first[steps] = (uint8_t)w.n;
	/* rbp's words, last step first: a step's second word is the rbp it
	 * read (its first the return address) */
	bool live = false; /* rbp after this step used later */
	unsigned keep = 0;
	bool kept[MEMO_WORDS];
	for (int i = steps - 1; i >= 0; i--) {
		for (unsigned k = first[i]; k < first[i + 1]; k++)
			kept[k] = k == first[i] || live;
		if (first[i + 1] - first[i] == 2)
			live = uses_bp[i];
		else
			live = live || uses_bp[i];
	}
	m.bp_live = live; /* else fp[0] steers no step */
	for (unsigned k = 0; k < w.n; k++)
		if (kept[k]) {
			m.off[keep] = m.off[k];
			m.word[keep++] = m.word[k];
		}
	m.nwords = (uint8_t)keep;
	const uintptr_t *f;
	if (mc_stack_get(id, &f) != n || !mc_words_eq(f, frames, (size_t)n))
		return;
	struct memo_block *b = memo_block();
	if (!b && !(b = memo_block_take()))
		return;
	unsigned k = memo_pair(fp), at = b->at[k];
	unsigned j = 0; /* a new pair's first slot, its other made empty */
	struct memo *p;
	if (!at) {
		at = b->at[k] = ++b->next; /* at most 16: one a pair */
		p = memo_pair_slots(b, at);
		p[1].id = 0;
	} else {
		p = memo_pair_slots(b, at);
		j = p[0].first ^ 1u; /* the one not used last */
	}
	p[j] = m;
	p[0].first = (uint8_t)j;
}

/* An exact unwinder's stack. */
static __attribute__((noinline)) uint32_t capture_exact(void *fp, int max)
{
	uintptr_t frames[MC_MAX_DEPTH];
	int n = capture_slow(fp, frames, max);
	if (n <= 0)
		return 0;
	uint64_t h = hash_frames(frames, n);
	const struct slot *c = capture_cache_find(h);
	uint32_t id = c ? c->id : 0;
	if (!c) {
		id = mc_depot_intern(h, frames, n);
		capture_cache_put(h, id, GEN_FP);
	}
	return id;
}

/* A thread's first capture: learn its stack, then capture. */
static __attribute__((noinline)) uint32_t capture_first(void *fp)
{
	if (learn_stack())
		return mc_stack_capture(fp);
	/* The C library's block inside the program's pthread_getattr_np
	 * (freed before it returns) gets its first frame; the thread's next
	 * capture learns the stack. */
	uint32_t id = mc_stack_capture(fp);
	me.lo = UINTPTR_MAX;
	me.top = 0;
	return id;
}

/* Its slow paths are all tail calls, so the common path saves no
 * registers. */
/* A call nested in an operator new or delete that cxxnew.c forwards lies
 * deeper on the stack than its frame, and that frame still holds its
 * return address.  An exception thrown through operator new leaves the
 * frame set: the first capture found outside it (or with that frame
 * overwritten) clears it. */
void *mc_cxx_call_frame(uintptr_t *f)
{
	uintptr_t *h = mc_self.cxx_frame;
	if ((uintptr_t)h > (uintptr_t)f && h[1] == mc_self.cxx_ret)
		return h;
	mc_self.cxx_frame = NULL;
	return f;
}

/* A stack the cache marks GEN_EXACT whose walk_fp stopped at its first
 * frame: the malloc-family function called from one without a frame
 * pointer (strdup, fopen, setlocale's helpers, qsort's ...), which keeps
 * a value in rbp.  Where that frame's CFI step (not the thread's run)
 * reaches a function with a frame pointer, capture_later walks on from
 * there, called here: the steps capture_more would take (its first
 * segment is that one frame, its rule looked up, then that step), with
 * the same frames, hash and cache entries, without its prologue, setup
 * and big frame.  Anything else is capture_more's, from the start. */
static __attribute__((noinline)) uint32_t capture_leaf(uintptr_t *fp, int max, uint64_t h,
							const struct slot *c, uintptr_t end_sp)
{
	uintptr_t top = me.top, ret = fp[1], sp = (uintptr_t)fp + 16, bp = fp[0];
	struct rule_view rv;
	rule_view_load(&rv);
	uint64_t val = 0, val1 = 0, key = capture_rule(&rv, ret, &val);
	if (max < 2 || !top || !(key & RULE_CFI) || run_matches(&last_run, ret, sp, bp))
		return capture_more(fp, max, h, c, end_sp, 0);
	uintptr_t frames[MC_MAX_DEPTH + RUN_FRAMES];
	frames[0] = ret;
	int m = 1;
	uint64_t hk = h;
	uintptr_t r1 = ret, sp1 = sp, bp1 = bp;
	if (step(key, val, &r1, &sp1, &bp1, top, NULL, NULL) &&
	    !(capture_rule(&rv, r1, &val1) & RULE_CFI)) {
		ret = r1;
		sp = sp1;
		bp = bp1;
	} else {
		/* more CFI steps (a caller without a frame pointer either:
		 * all of /bin/date's), as capture_more takes them from here */
		uint32_t gen;
		if (!capture_cfi_steps(&ret, &sp, &bp, top, max, frames, &m, &hk, key, val, &gen)) {
			return capture_store_end(h, hk, frames, m, gen, false, h ^ last_run.key);
		}
	}
	frames[m] = ret;
	return capture_later(frames, m, max, top, hash_step(hk, ret), (uintptr_t *)(sp - 16),
			     (uintptr_t *)bp);
}

/* A stack the cache marks GEN_EXACT: the thread's kept walk, else
 * capture_more's, kept where the stack was stored before (a repeated
 * stack: a new one, such as each of bench/suite_test's strdup callers,
 * would cost the keeping walk and not be found again). */
static __attribute__((noinline)) uint32_t capture_exact_again(uintptr_t *fp, int max, uint64_t h,
							       const struct slot *c, uintptr_t end_sp)
{
	/* (an empty slot's first frame, 0, is no return address) */
	struct memo_block *b = memo_block();
	uint32_t id;
	unsigned at;
	if (b && (at = b->at[memo_pair(fp)]) != 0) {
		struct memo *m = memo_pair_slots(b, at);
		if ((m[0].ret == fp[1] || m[1].ret == fp[1]) &&
		    (id = capture_memo_find(m, fp, max)) != 0)
			return id;
	}
	uint32_t stored = mc_depot_next_id();
	id = end_sp == (uintptr_t)fp + 16 ? capture_leaf(fp, max, h, c, end_sp)
					   : capture_more(fp, max, h, c, end_sp, 0);
	if (id < stored) /* a stack seen before: worth keeping its walk */
		capture_memo_keep(fp, max, id);
	return id;
}

static inline __attribute__((always_inline)) uint32_t capture_from(void *fp, int max)
{
	if (unlikely(mc_opt.unwinder != MC_UNWIND_FP))
		return capture_exact(fp, max);
	bool unlearned = false;
	uintptr_t end_sp = 0, end_bp = 0;
	uint64_t h = walk_fp(fp, me.top, max, &unlearned, &end_sp, &end_bp);
	if (unlikely(unlearned))
		return capture_first(fp);
	/* A 64-bit hash match is taken as the same stack: a false match
	 * needs a collision among the few stacks of one thread. */
	const struct slot *c = capture_cache_find(h);
	if (likely(c != NULL)) {
		if (likely(c->gen == GEN_FP))
			return c->id;
		/* A run's stack: the run starts at its last frame, which the
		 * hash holds (not read again), at that sp and rbp (end_sp is 0
		 * where walk_fp reached the depth: never a run's sp); its words
		 * compared unless it is the thread's fixed entry
		 * (RUN_FIXED_FRAMES).  A stack that ends in the fixed entry is
		 * then marked GEN_FP: that frame's record is the one the entry
		 * called from (main's, the thread routine's), entered once at
		 * one sp and never left while the thread captures under it, so
		 * the same frames end at the same sp and rbp, and the id is the
		 * stack's whatever run the thread keeps later.  Marked at its
		 * first repeat, not when stored: a new stack costs nothing more
		 * (suite_test 1's, 2 instructions each). */
		if (c->gen == last_run.gen && end_sp == last_run.sp && end_bp == last_run.bp) {
			if (last_run.fixed) {
				((struct slot *)c)->gen = GEN_FP;
				return c->id;
			}
			if (run_words_match(&last_run))
				return c->id;
		}
		if (c->gen == GEN_EXACT)
			return capture_exact_again(fp, max, h, c, end_sp);
	}
	if (end_sp)
		return capture_more(fp, max, h, c, end_sp, end_bp);
	return capture_lost(fp, max, h, c);
}

/* MEMCHECK_STACK_DEPTH=0 records no stacks, except for the blocks the
 * system's runtime makes for itself (mc_stacks_runtime_object: the dynamic
 * loader's thread vectors and object lists, tcmalloc's start-up objects
 * made with the operator new memcheck interposes).  Their suppressions
 * match on the stack: without one, tcmalloc's by-design loss of 8 bytes
 * would fail every process, and the loader's blocks any program that
 * starts a thread or calls dlopen.  Those stacks are as deep as the
 * default's. */
#define RUNTIME_DEPTH 16

static struct {
	uintptr_t lo, hi;
} runtime[2];
/* Both objects' extent, lowest start to highest end (len 0: neither
 * known): a call site outside it, every capture's with
 * MEMCHECK_STACK_DEPTH=0 but the runtime's own, is told by one range
 * test inline (two loads, adjacent), not the two objects' (four) in a
 * call. */
static struct {
	uintptr_t lo, len;
} runtime_span;

uintptr_t mc_loader_lo, mc_loader_len;

void mc_stacks_runtime_object(int i, uintptr_t lo, uintptr_t hi)
{
	runtime[i].lo = lo;
	runtime[i].hi = hi;
	if (i == 0) { /* the dynamic loader, for calloc's DTV test */
		mc_loader_lo = lo;
		mc_loader_len = hi - lo;
	}
	uintptr_t slo = UINTPTR_MAX, shi = 0;
	for (int j = 0; j < 2; j++) {
		if (runtime[j].hi > runtime[j].lo) {
			slo = runtime[j].lo < slo ? runtime[j].lo : slo;
			shi = runtime[j].hi > shi ? runtime[j].hi : shi;
		}
	}
	runtime_span.lo = shi ? slo : 0;
	runtime_span.len = shi ? shi - slo : 0;
}

/* A call site within runtime_span, or under an operator new or delete
 * that cxxnew.c forwards: the runtime's own stack where the call site
 * lies in one of the objects, else none. */
static __attribute__((noinline)) uint32_t capture_runtime_own(void *fp)
{
	if (unlikely(mc_self.cxx_frame != NULL))
		fp = mc_cxx_call_frame(fp);
	uintptr_t ret = ((uintptr_t *)fp)[1];
	if (ret - runtime[0].lo >= runtime[0].hi - runtime[0].lo &&
	    ret - runtime[1].lo >= runtime[1].hi - runtime[1].lo)
		return 0;
	return capture_from(fp, RUNTIME_DEPTH);
}

uint32_t mc_stack_capture(void *fp)
{
	int max = mc_opt.stack_depth;
	if (unlikely(max <= 0)) {
		/* (a tail call each: no registers saved on this path) */
		if (likely(mc_self.cxx_frame == NULL) &&
		    likely(((uintptr_t *)fp)[1] - runtime_span.lo >= runtime_span.len))
			return 0;
		return capture_runtime_own(fp);
	}
	if (unlikely(mc_self.cxx_frame != NULL))
		fp = mc_cxx_call_frame(fp);
	return capture_from(fp, max);
}

void mc_stacks_lock(void)
{
	rules_take();
	mc_depot_lock();
	mc_depot_prefork();
}

void mc_stacks_unlock(void)
{
	mc_depot_unlock();
	rules_give();
}

void mc_stacks_after_fork_child(void)
{
	atomic_flag_clear(&rules_lock);
	mc_depot_after_fork_child();
	me.lo = UINTPTR_MAX; /* the child's only thread: learn again */
	/* The child's only thread: every block free (the others' owners
	 * are the parent's threads), its own taken again, cleared. */
	for (int i = 0; i < MEMO_THREADS; i++)
		atomic_store_explicit(&memo_owner[i], 0, memory_order_relaxed);
	if (mc_map_is_tight())
		memo_tight_owners();
	me.memo = 0;
	me.top = 0;
}
