/*
 * vgtext.c - lines in valgrind's words: the "==pid==" prefix, a stack's
 * "at"/"by" frames (report.c's text and heap errors use them too), and,
 * under MEMCHECK_VALGRIND_TEXT (memcheck's valgrind command line,
 * tools/vgcompat.c), the process's end as valgrind's memcheck writes it:
 * HEAP SUMMARY, the loss records, LEAK SUMMARY (with its lines "of which
 * reachable via heuristic") or "All heap blocks were
 * freed -- no leaks are possible", and ERROR SUMMARY.
 *
 * Scripts and drivers read those lines by their bytes: jq's shtest greps
 * '^==[0-9][0-9]*== ERROR SUMMARY: 0 errors', others take a field with
 * awk '/ERROR SUMMARY/ {print $4}' or cut -d ' ' -f 4, or grep
 * '== +.* lost: [^0]', "All heap blocks were freed", "in use at exit: 0
 * bytes in 0 blocks"; CTest counts the records' headings, "definitely
 * lost" and "possibly lost" ones and "still reachable" ones, which its
 * default -q --show-reachable=yes lists in a passing run too (a
 * "Potential Memory Leak" each).  So each line is valgrind 3.19's to
 * the byte (compared with its output on the same programs:
 * tests/test_wrapper.c), with memcheck's figures: numbers with
 * thousands separators, the LEAK SUMMARY's words right-aligned,
 * records in valgrind's order (ascending total bytes, then kind, then
 * blocks), numbered over every record, the suppressed ones included
 * (mc_vgtext_records).
 * valgrind's rules for the counts (its manual, "--leak-check",
 * "--errors-for-leak-kinds"): with --leak-check=full each record of the
 * kinds --errors-for-leak-kinds names (definitely and possibly lost by
 * default) is an error of its own context, a suppressed one of those
 * kinds a suppressed error; a heap error is an error, its context its
 * kind and stack.  Nothing follows ERROR SUMMARY but what valgrind
 * writes there (-s's list, MEMCHECK_VALGRIND_LIST): the verdict is the
 * summary's and the exit status's, as valgrind's.
 *
 * Nothing here reads RSS or the allocator's statistics: the figures are
 * the ones the one-line summary has, plus the kinds and suppressed
 * figures, which region.c matches for every kind when this text shows
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

const char *mc_text_pid(char p[32])
{
	int pid = (int)mc_pid();
	char *w = p;
	*w++ = '=';
	*w++ = '=';
	if (pid < 0)
		*w++ = '-';
	w = mc_utoa(w, pid < 0 ? -(uint64_t)pid : (uint64_t)pid);
	memcpy(w, "==", 3);
	return p;
}

/* Reports show a stack up to main, as valgrind does
 * (--show-below-main=no): what lies below, the C library's start-up, is
 * every stack's.  Where main has no name (a stripped program: "???"),
 * up to the first start-up function, as valgrind's stacks stop there
 * too (its "(below main)").  fi: a frame's functions, innermost first,
 * k of them.  Out of line (the JSON record's and the XML's stacks call
 * it too), beside the frames' loop in group 3 with mc_supp_below_main
 * and its names: a leaking exit calls it at every frame. */
__attribute__((noinline)) bool mc_text_is_main(const struct mc_frame_info *fi, int k)
{
	return strcmp(fi[k - 1].function, "main") == 0 || mc_supp_below_main(fi[k - 1].function);
}

/* A frame's file as valgrind shows it: the file name alone by default;
 * with --fullpath-after (MEMCHECK_VALGRIND_FULLPATH, each prefix ended
 * by ':'), the path with its directory shown from after the first of
 * the prefixes found in it, in their order, or whole where none is (an
 * empty prefix matches at once: --fullpath-after= shows every path
 * whole).  valgrind's m_debuginfo does the same with the directory and
 * file its line table gives, which libdw's path joins. */
static const char *vg_file(const char *path, char *out, size_t size)
{
	const char *slash = mc_last_slash(path);
	const char *fp = mc_opt.valgrind_fullpath;
	if (!slash)
		return path;
	if (!fp || !*fp)
		return slash + 1;
	size_t dlen = (size_t)(slash - path);
	if (dlen >= size)
		return path;
	memcpy(out, path, dlen);
	out[dlen] = 0;
	const char *dir = out;
	for (const char *pre = fp; *pre;) {
		const char *end = strchr(pre, ':');
		size_t n = end ? (size_t)(end - pre) : strlen(pre);
		const char *at = dir;
		if (n) {
			at = memmem(dir, dlen, pre, n);
			if (at)
				at += n;
		}
		if (at) {
			dir = at;
			break;
		}
		pre += n + (end != NULL);
	}
	/* valgrind writes "dir/file", or the file alone where the
	 * prefix took the whole directory */
	return *dir ? path + (dir - out) : slash + 1;
}

/* s escaped (mc_text_escape, cut at cap) into b, through a buffer as
 * long as its escape can be (4 bytes a byte at most), not cap: the
 * frames' lines are written at an exit's deepest, where each 4 KiB of
 * stack deeper was a page fault. */
static void put_escaped(struct mc_buf *b, const char *s, size_t cap)
{
	size_t n = 4 * strlen(s) + 1;
	char out[n < cap ? n : cap];
	mc_buf_puts(b, mc_text_escape(s, out, sizeof out));
}

/* A C++ frame's name demangled (its buffer in a function of its own,
 * which a C program's frames do not call) */
static __attribute__((noinline)) void put_demangled(struct mc_buf *b,
						    const struct mc_frame_info *fi)
{
	char shown[MC_SHOWN_MAX];
	put_escaped(b, mc_frame_shown(fi, false, shown, sizeof shown), MC_SHOWN_MAX);
}

/* A frame's file in valgrind's layout (vg_file's directory buffer in a
 * function of its own, which memcheck's own text does not call) */
static __attribute__((noinline)) void put_vg_file(struct mc_buf *b, const char *path, size_t cap)
{
	char dir[MC_SHOWN_MAX];
	put_escaped(b, vg_file(path, dir, sizeof dir), cap);
}

/* One frame's line; vg: valgrind's layout (the file as vg_file shows it,
 * none of memcheck's marks) */
/* A start-up function below main written as valgrind names it, "(below
 * main)": true where fn is one (mc_supp_below_main).  Apart, so that the
 * frames' loop stays as short as it was: it is reached once a stack. */
static __attribute__((noinline)) bool below_main_put(struct mc_buf *b, const char *fn)
{
	if (!mc_supp_below_main(fn))
		return false;
	mc_buf_puts(b, "(below main)");
	return true;
}

static void text_frame(struct mc_buf *b, const char *prefix, const char *by, uintptr_t pc,
		       const struct mc_frame_info *fi, bool inlined, const char *mark, bool vg)
{
	/* pieces, not mc_buf_printf: two formats a frame were ~3 K
	 * instructions of vsnprintf */
	mc_buf_strs(b, prefix, by, NULL);
	/* valgrind's address of a caller's frame is the call's last byte,
	 * one before the return address the stack holds (as vgxml.c's
	 * ip), for every frame it shows after its own malloc's, the signal
	 * return's and the interrupted pc's too (3.19: 0x109180 where the
	 * return address is 0x109181); memcheck's own text keeps the
	 * return address.  A fault's pc is stored as the return address it
	 * would be (fatal.c fatal_fault_stack); a walk ends before a pc
	 * below 4096. */
	mc_buf_hex(b, pc - vg);
	mc_buf_puts(b, ": ");
	if (mc_frame_demangles(fi, inlined))
		put_demangled(b, fi);
	else if (!vg || !below_main_put(b, fi->function))
		put_escaped(b, fi->function, MC_SHOWN_MAX);
	if (fi->file[0]) {
		mc_buf_puts(b, " (");
		if (vg)
			put_vg_file(b, fi->file, 4 * sizeof fi->file);
		else
			put_escaped(b, fi->file, 4 * sizeof fi->file);
		mc_buf_puts(b, ":");
		mc_buf_int(b, fi->line);
		mc_buf_strs(b, ")", inlined && !vg ? " [inlined]" : "", mark, "\n", NULL);
	} else if (vg && !fi->object[0]) {
		/* code of no object loaded (a dlclose'd library's): valgrind
		 * writes "???" alone */
		mc_buf_strs(b, mark, "\n", NULL);
	} else {
		mc_buf_puts(b, " (in ");
		put_escaped(b, fi->object[0] ? fi->object : "?", 4 * sizeof fi->file);
		mc_buf_strs(b, ")", mark, "\n", NULL);
	}
}

static void text_stack_in(struct mc_buf *b, const char *prefix, const uintptr_t *f, int n,
			  struct mc_frame_info *fi)
{
	/* valgrind's layout wherever its text is written (its command
	 * line): file names as it shows them, and none of memcheck's own
	 * marks, which its readers would take for part of a path */
	bool vg = mc_opt.valgrind_text != MC_VGTEXT_NONE;
	bool leading = true; /* mc_allocfn_lead's walk, as the frames are named */
	for (int i = 0; i < n; i++) {
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++) {
			if (leading)
				leading = mc_allocfn_is(f, n, i, &fi[j], j + 1 < k);
			text_frame(b, prefix, i || j ? "   by " : "   at ", f[i], &fi[j], j + 1 < k,
				   leading && !vg ? " [allocation function]" : "", vg);
		}
		if (mc_text_is_main(fi, k))
			break;
	}
}

/* Where the symbolizer's frames are lent out: frames of its own */
static __attribute__((noinline)) void text_stack_aside(struct mc_buf *b, const char *prefix,
						       const uintptr_t *f, int n)
{
	struct mc_frame_info fi[MC_MAX_INLINE];
	text_stack_in(b, prefix, f, n, fi);
}

void mc_text_stack(struct mc_buf *b, const char *prefix, uint32_t id)
{
	const uintptr_t *f;
	int n = mc_stack_get_code(id, &f);
	if (n == 0) {
		mc_buf_strs(b, prefix, "   (no stack recorded: MEMCHECK_STACK_DEPTH=0)\n", NULL);
		return;
	}
	/* the symbolizer's frames: 10 KiB of stack under its calls fewer */
	struct mc_frame_info *fi = mc_symbolize_frames_borrow();
	if (!fi) {
		text_stack_aside(b, prefix, f, n);
		return;
	}
	text_stack_in(b, prefix, f, n, fi);
	mc_symbolize_frames_return();
}

/* ---- heap errors' contexts ------------------------------------------- */

static uint32_t vg_stack_id(uint32_t id);

/* valgrind counts an error's context once: an error at a stack it has
 * seen is one more error of that context.  It tells them apart by the
 * first 4 frames of the stack it shows (its error resolution, medium:
 * the free function's frame one of them) and, once 100 contexts are
 * written, by the first 2 (low); after 1000 it writes and counts no
 * error at all (--error-limit=yes, its default).  Under --xml neither.
 * Every kind of refused free is one kind of error for it (Err_Free):
 * a double free and an interior one at the same stack are one context.
 * Each slot here holds 1 + the interned stack of those first frames
 * (and beside it 1 + the first 2's, for the comparisons past 100),
 * claimed by compare-and-swap in order: errors may come from several
 * threads at once, and one may be in a forked child's copy of a lock.
 * used: the slots claimed, the loops' bound (the arrays' pages are
 * touched only as far as errors came).  A forked child keeps them all,
 * as valgrind's child is its parent's copy. */
#define VG_CONTEXTS MC_VG_CONTEXTS
#define VG_ERRORS_SHOWN_MAX 1000	/* valgrind's M_COLLECT_NO_ERRORS_AFTER_SHOWN */
#define VG_ERRORS_SLOWLY 100		/* valgrind's M_COLLECT_ERRORS_SLOWLY_AFTER */
#define VG_ERRORS_FOUND_MAX 10000000	/* its M_COLLECT_NO_ERRORS_AFTER_FOUND */
static _Atomic uint64_t contexts[VG_CONTEXTS];
static _Atomic uint32_t contexts_low[VG_CONTEXTS];
static _Atomic int contexts_used;
static _Atomic unsigned more_contexts;	/* past the table (--error-limit=no, XML) */
static _Atomic uint64_t errors_found;	/* the errors counted */
static _Atomic uint64_t errors_dropped; /* after the cutoff: neither written nor counted */
static _Atomic int cutoff_said;		/* 1 the slow-down's lines, 2 the stop's */
/* Under MEMCHECK_VALGRIND_LIST (-s, -v): each context's errors, and its
 * lines as written (the first time), for the list at the end */
static _Atomic unsigned context_errors[VG_CONTEXTS];
static struct mc_buf context_text[VG_CONTEXTS];

static uint32_t vg_first_frames(uint32_t cut, int frames);

int mc_vgtext_contexts_used(void)
{
	return atomic_load(&contexts_used);
}

/* valgrind's lines at its cutoffs, each after "==PID==", an empty line
 * before them (and after the stop's), as its umsg writes them, -q or
 * not; each line ended by a NUL, the last by two.  Arrays, not string
 * literals: the linker merges a literal with an equal one or a tail of
 * one of another function's, whose copy the exit's text then reads
 * from a later block (make place-check). */
static const char vg_slowly[] =
	" \n\0 More than 100 errors detected.  Subsequent errors\n\0"
	" will still be recorded, but in less detail than before.\n\0";
static const char vg_stop_shown[] =
	" \n\0 More than 1000 different errors detected.  I'm not reporting any more.\n\0";
static const char vg_stop_found[] =
	" \n\0 More than 10000000 total errors detected.  I'm not reporting any more.\n\0";
static const char vg_stop_rest[] =
	" Final error counts will be inaccurate.  Go fix your program!\n\0"
	" Rerun with --error-limit=no to disable this cutoff.  Note\n\0"
	" that errors may occur in your program without prior warning from\n\0"
	" Valgrind, because errors are no longer being displayed.\n\0 \n\0";

static void lines_after(struct mc_buf *b, const char *p, const char *lines)
{
	for (; *lines; lines += strlen(lines) + 1) {
		mc_buf_puts(b, p);
		mc_buf_puts(b, lines);
	}
}

/* Once each (which: 1 the slow-down's, 2 the stop's) */
static __attribute__((noinline, cold)) void cutoff_lines(int which)
{
	_Static_assert(VG_ERRORS_SHOWN_MAX == 1000 && VG_ERRORS_FOUND_MAX == 10000000 &&
			       VG_ERRORS_SLOWLY == 100, "valgrind's numbers, in its lines");
	if (atomic_fetch_or(&cutoff_said, which) & which)
		return;
	if (mc_vgtext_silent() || mc_opt.text == MC_TEXT_NONE)
		return;
	char p[32];
	mc_text_pid(p);
	struct mc_buf b = { 0 };
	if (which == 1) {
		lines_after(&b, p, vg_slowly);
	} else {
		lines_after(&b, p, atomic_load(&contexts_used) >= VG_ERRORS_SHOWN_MAX ? vg_stop_shown
									      : vg_stop_found);
		lines_after(&b, p, vg_stop_rest);
	}
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
}

int mc_vgtext_error(unsigned kind, uint32_t stack, bool *fresh)
{
	(void)kind; /* one kind of error for valgrind: Err_Free */
	*fresh = false;
	bool xml = mc_opt.valgrind_xml && *mc_opt.valgrind_xml;
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE && !xml)
		return -1; /* memcheck's own text: no context asked */
	bool text = !xml && mc_opt.valgrind_text, limit = text && mc_opt.valgrind_error_limit;
	int used = atomic_load(&contexts_used);
	if (limit && (used >= VG_ERRORS_SHOWN_MAX ||
		      atomic_load(&errors_found) >= VG_ERRORS_FOUND_MAX)) {
		cutoff_lines(2);
		atomic_fetch_add(&errors_dropped, 1);
		return -2;
	}
	atomic_fetch_add(&errors_found, 1);
	bool low = text && used >= VG_ERRORS_SLOWLY; /* --error-limit=no too */
	if (low)
		cutoff_lines(1);
	uint32_t cut = vg_stack_id(stack);
	uint64_t key = 1 + (uint64_t)vg_first_frames(cut, 4);
	uint32_t key_low = 1 + vg_first_frames(cut, 2);
	for (int i = 0; i < VG_CONTEXTS; i++) {
		uint64_t v = atomic_load(&contexts[i]);
		if (v == 0 && atomic_compare_exchange_strong(&contexts[i], &v, key)) {
			atomic_store(&contexts_low[i], key_low);
			for (int u = atomic_load(&contexts_used);
			     u < i + 1 && !atomic_compare_exchange_weak(&contexts_used, &u, i + 1);)
				;
			*fresh = true;
		} /* else v is what another thread put there first */
		if (*fresh || v == key || (low && atomic_load(&contexts_low[i]) == key_low)) {
			atomic_fetch_add(&context_errors[i], 1);
			return i;
		}
	}
	atomic_fetch_add(&more_contexts, 1);
	*fresh = true;
	return -1;
}

static uint64_t error_contexts(uint64_t errors)
{
	uint64_t n = atomic_load(&more_contexts);
	for (int i = 0, used = atomic_load(&contexts_used); i < used; i++)
		n += atomic_load(&contexts[i]) != 0;
	/* errors memcheck's own text did not show may be of contexts not
	 * seen: at least one context when there are errors, never more
	 * than errors */
	if (errors && !n)
		n = 1;
	return n < errors ? n : errors;
}

/* A name of the address's description (a function's, a file's, a data
 * symbol's), escaped as the text escapes it, and as XML text in the XML
 * (valgrind's %pS there: the words around it are written as they are) */
static void put_name(struct mc_buf *b, const struct mc_frame_info *fi, const char *s, bool xml)
{
	struct mc_buf n = { 0 };
	if (fi && mc_frame_demangles(fi, false))
		put_demangled(&n, fi);
	else
		put_escaped(&n, s, MC_SHOWN_MAX);
	for (size_t i = 0; xml && i < n.len; i++) {
		char c = n.s[i];
		mc_buf_puts(b, c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;"
			       : c == '"' ? "&quot;" : (char[]){ c, 0 });
	}
	if (!xml && n.len)
		mc_buf_put(b, n.s, n.len);
	mc_buf_free(&n);
}

/* valgrind's second line for an address on a thread's stack, after
 * between: the frame holding it, "in frame #N, created by FN
 * (FILE:LINE)", FN the symbol table's name at the frame's return
 * address, FILE its line's file (the name alone, whatever
 * --fullpath-after says), LINE the one where FN begins ("???" and none
 * where they are unknown; no line where neither FN nor FILE is known) */
/* " (", ":" and ")" of frame_line, an array of its own: literals of the
 * same text would be the ones text_frame's, which every exit's report
 * reads, is given (the compiler keeps one copy), in this function's
 * string section, outside lib/text-order.ld's groups */
static const char frame_punct[] = " (:)";

static __attribute__((noinline, cold)) void frame_line(struct mc_buf *b,
						       const struct mc_stack_place *on,
						       const char *between, bool xml)
{
	struct mc_frame_info fn, at;
	bool deep;
	mc_symbolize_quick(on->pc, &fn, &deep);
	mc_symbolize_frames(on->pc, &at, 1);
	if (!fn.function[0] && !at.file[0])
		return;
	mc_buf_strs(b, between, "in frame #", NULL);
	mc_buf_int(b, on->frame);
	mc_buf_puts(b, ", created by ");
	put_name(b, fn.function[0] ? &fn : NULL, fn.function[0] ? fn.function : "???", xml);
	const char *file = strrchr(at.file, '/');
	file = file ? file + 1 : at.file;
	mc_buf_put(b, frame_punct, 2);
	put_name(b, NULL, *file ? file : "???", xml);
	mc_buf_put(b, frame_punct + 2, 1);
	int line = *file ? mc_symbolize_fn_line(on->pc) : 0;
	if (line)
		mc_buf_int(b, line);
	mc_buf_put(b, frame_punct + 3, 1);
}

/* " is on thread N's stack", and the frame holding the address */
static __attribute__((noinline, cold)) void on_stack(struct mc_buf *b,
						     const struct mc_stack_place *on,
						     const char *between, bool xml)
{
	mc_buf_puts(b, " is on thread ");
	mc_buf_int(b, on->thread);
	mc_buf_puts(b, "'s stack");
	if (on->frame >= 0)
		frame_line(b, on, between, xml);
}

/* " is N bytes inside data symbol "NAME"", where a data symbol of an
 * object holds ptr: valgrind's description before any other of a
 * pointer in no block */
static __attribute__((noinline, cold)) bool data_symbol(struct mc_buf *b, uintptr_t ptr,
							bool xml)
{
	struct mc_frame_info sym;
	uint64_t off;
	if (!mc_symbolize_data(ptr, &sym, &off))
		return false;
	char c[32];
	mc_buf_strs(b, " is ", mc_commas(off, c), " bytes inside data symbol \"", NULL);
	put_name(b, &sym, sym.function, xml);
	mc_buf_puts(b, "\"");
	return true;
}

/* Where a refused free's address lies, in valgrind's words (its text's
 * line after "Address", its XML's <auxwhat>): in a block freed before
 * (memcheck frees nothing twice: free_stack), inside a live one (block),
 * or in none it knows: there, under valgrind's text (on), as valgrind
 * looks (m_addrinfo's order), in an object's data symbol, on the
 * calling thread's stack or another's that waits in a system call
 * (stacks.c's mc_stack_place), else nowhere it can say */
void mc_vgtext_address(struct mc_buf *b, uintptr_t ptr, uint64_t size, bool freed,
		       uintptr_t block, const struct mc_stack_place *on, const char *between,
		       bool xml)
{
	char c1[32], c2[32];
	mc_buf_puts(b, "Address ");
	mc_buf_hex(b, ptr);
	if (freed || block)
		mc_buf_strs(b, " is ", mc_commas(block ? ptr - block : 0, c1),
			    " bytes inside a block of size ", mc_commas(size, c2),
			    freed ? " free'd" : " alloc'd", NULL);
	else if (on && data_symbol(b, ptr, xml))
		return;
	else if (on && on->thread)
		on_stack(b, on, between, xml);
	else
		mc_buf_puts(b, " is not stack'd, malloc'd or (recently) free'd");
}

/* A heap error in valgrind's text, where valgrind's text is written:
 * its heading, which scripts grep from the line's start ("==PID==
 * Invalid free() / delete / delete[] / realloc()"), the stack, the
 * address, the stacks that freed and allocated the block, an empty
 * line; each context once, as valgrind writes it (the repeats counted
 * in ERROR SUMMARY).  False where memcheck's own text says it. */
bool mc_vgtext_heap_error(int slot, bool fresh, uintptr_t ptr, uint64_t size, uint32_t alloc_stack,
			  uint32_t free_stack, uint32_t now_stack, uintptr_t block,
			  const struct mc_stack_place *on)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return false;
	if (!fresh || mc_opt.text == MC_TEXT_NONE)
		return true;
	char p[32], sp[34];
	mc_text_pid(p);
	memcpy(sp, p, strlen(p));
	memcpy(sp + strlen(p), " ", 2);
	struct mc_buf b = { 0 };
	mc_buf_strs(&b, p, " Invalid free() / delete / delete[] / realloc()\n", NULL);
	mc_text_stack(&b, sp, vg_stack_id(now_stack));
	mc_buf_strs(&b, p, "  ", NULL);
	char between[40];
	memcpy(between, "\n", 2);
	memcpy(between + 1, p, strlen(p) + 1);
	memcpy(between + 1 + strlen(p), "  ", 3);
	mc_vgtext_address(&b, ptr, size, free_stack != 0, block, on, between, false);
	mc_buf_puts(&b, "\n");
	if (free_stack)
		mc_text_stack(&b, sp, vg_stack_id(free_stack));
	if (alloc_stack && (free_stack || block)) {
		if (free_stack)
			mc_buf_strs(&b, p, "  Block was alloc'd at\n", NULL);
		mc_text_stack(&b, sp, vg_stack_id(alloc_stack));
	}
	/* kept for -s's list, which writes them again (without the
	 * empty line) */
	if (mc_opt.valgrind_list == MC_VGLIST_LIST && slot >= 0 && !context_text[slot].s)
		mc_buf_put(&context_text[slot], b.s, b.len);
	mc_buf_strs(&b, sp, "\n", NULL);
	mc_text_write(b.s, b.len);
	mc_buf_free(&b);
	mc_symbolize_end();
	return true;
}

/* valgrind's --child-silent-after-fork=yes (MEMCHECK_VALGRIND_CHILD_SILENT),
 * in a child forked since the last exec: no report and no message; the
 * regions are still judged and a heap error counted, and the status is
 * still MEMCHECK_EXITCODE where one fails, as valgrind's silent child
 * exits with --error-exitcode's N. */
static bool silent;
static bool forked; /* since the last exec (vgxml.c's head asks) */

bool mc_vgtext_silent(void)
{
	return silent;
}

bool mc_vgtext_forked(void)
{
	return forked;
}

/* ---- the head -------------------------------------------------------- */

/* valgrind writes its head (mc_buf_vg_head) as each process it follows
 * starts: the program it runs (memcheck's valgrind command line writes
 * that one, before executing it: tools/vgcompat.c), each program
 * exec'd below it under --trace-children=yes, and each forked child
 * whose --log-file has %p, at the fork, in the file of its own, which
 * then holds the head even where the child execs a program valgrind
 * does not follow or is killed (c-blosc's test_forksafe: 31 of 39 files
 * began at HEAP SUMMARY, session 44).  The command is the image's: the
 * program's words as given, or in an exec'd image the file name execve
 * was given in argv[0]'s place (valgrind 3.19: "Command: /bin/true"
 * for execl("/bin/true", "true", NULL)); the parent's pid where the
 * text goes to a file.  A forked child of a file shared with its parent
 * (no %p), of standard error or of a descriptor writes none, as
 * valgrind's.  Only under memcheck's valgrind command line: a process
 * MEMCHECK_VALGRIND_TEXT alone was set for writes its end alone. */
int mc_vgtext_image;

/* MEMCHECK_LOG names a file, and one of each process's own (%p); not
 * the descriptor --log-fd names (MC_VG_LOG_FD) */
static bool log_file(bool *own)
{
	const char *l = mc_opt.log;
	*own = false;
	if (!l || !*l || !strcmp(l, "-") || mc_str_after(l, MC_VG_LOG_FD))
		return false;
	for (; *l; l++)
		if (*l == '%' && l[1]) {
			*own |= l[1] == 'p';
			l++;
		}
	return true;
}

/* The image's words, each ended by a NUL, into c (/proc/self/cmdline);
 * the name that takes the first's place in an exec'd image, or NULL */
const char *mc_vgtext_words(struct mc_buf *c)
{
	int fd = mc_proc_open("cmdline", O_RDONLY);
	for (; fd >= 0;) {
		char *room = mc_buf_room(c, 4096);
		long got = room ? mc_sys_read(fd, room, 4096) : -1;
		if (got <= 0)
			break;
		c->len += (size_t)got;
	}
	if (fd >= 0)
		mc_sys_close(fd);
	return mc_vgtext_image == MC_VG_IMAGE_EXECD ? (const char *)getauxval(AT_EXECFN) : NULL;
}

/* The head into the text: a file of the process's own emptied first
 * (fresh: valgrind opens it so, an image exec'd in the process replacing
 * what the one before it wrote) */
static __attribute__((noinline, cold)) void head(bool fresh)
{
	bool own;
	bool file = log_file(&own);
	if (mc_opt.text == MC_TEXT_FAIL || mc_opt.text == MC_TEXT_NONE || silent)
		return;
	int saved = errno;
	struct mc_buf words = { 0 }, b = { 0 };
	const char *exe = mc_vgtext_words(&words);
	mc_buf_vg_head(&b, (long)mc_pid(), file ? (long)syscall(SYS_getppid) : -1, exe,
		       words.s ? words.s : "", words.len);
	/* a file opened for the head alone: the program runs holding no
	 * descriptor of memcheck's, as where the text is first written at
	 * its end (a test that lists /proc/self/fd for its leaked ones);
	 * where it cannot be, the text's own open says why */
	char path[4096];
	size_t bad;
	int fd = -1;
	if (file && b.s && mc_text_path(mc_opt.log, (long)mc_pid(), path, sizeof path, &bad) >= 0)
		fd = mc_sys_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
				       (fresh && own ? O_TRUNC : 0), 0644);
	if (fd >= 0) {
		mc_write_all(fd, b.s, b.len);
		mc_sys_close(fd);
	} else if (b.s) {
		mc_text_write(b.s, b.len);
	}
	mc_buf_free(&b);
	mc_buf_free(&words);
	errno = saved;
}

void mc_vgtext_begin(void)
{
	/* the program memcheck's valgrind command line runs has its head;
	 * a process not run by it (MEMCHECK_VALGRIND_TEXT set by hand)
	 * writes none, its end alone */
	if (mc_vgtext_image == MC_VG_IMAGE_EXECD && mc_opt.valgrind_text)
		head(true);
}

static __attribute__((noinline, cold)) void vg_after_fork(void)
{
	if (mc_opt.valgrind_child_silent) {
		silent = true;
		mc_opt.text = MC_TEXT_NONE;
	}
	/* The contexts stay: valgrind's child is its parent's copy, whose
	 * errors it counts (ERROR SUMMARY's "2 errors from 2 contexts",
	 * -s's list), and a context of its parent's it makes again is not
	 * written again (valgrind 3.19 on an invalid free before the fork
	 * and the same one in the child: tests/test_valgrind.c) */
	bool own;
	if (mc_opt.valgrind_text && mc_vgtext_image != MC_VG_IMAGE_NONE && log_file(&own) && own)
		head(true);
}

/* Every forked child runs it: valgrind's part out of its way */
void mc_vgtext_after_fork_child(void)
{
	forked = true;
	if (mc_opt.valgrind_text | mc_opt.valgrind_child_silent)
		vg_after_fork();
}

/* ---- the process's end ------------------------------------------------ */

/* A count with thousands separators, as valgrind's %'lu writes it. */
static const char *num_or_unknown(uint64_t v, char buf[32])
{
	return v == MEMCHECK_UNKNOWN ? "unknown" : mc_commas(v, buf);
}

/* Does mc_vgtext_regroup merge the groups (stacks captured deeper than
 * valgrind's, or records told by their first frames)? */
static bool regrouping(void)
{
	return mc_opt.valgrind_deeper || mc_opt.valgrind_resolution != MC_VGRES_HIGH;
}

/* valgrind's order of loss records, as valgrind 3.19 lists them
 * (tests/prog's plain_leak_cycle, _interior, _adjacent under
 * --show-leak-kinds=all): total bytes ascending (a record's own and
 * the indirect bytes its blocks lead, scan.c's credit), then kind,
 * still reachable first, then possibly, indirectly, definitely lost
 * (enum mc_kind's order reversed), then blocks ascending, then the
 * order in which the stacks were first stored: valgrind's last key is
 * its ExeContext's address, the older the lower, made at the first
 * allocation with that stack (as cut to --num-callers).  A depot id is
 * that ordinal; a stack cut for the text (mc_vgtext_regroup) is
 * interned at the report, so a regrouped record is told by the oldest of
 * the stacks it merged (its first, then) (tests/prog/corpus/tree_kept, --show-leak-kinds=all:
 * 24-byte records 8 to 3,070 in another order before session 58). */
static int vg_cmp(const void *x, const void *y)
{
	const struct mc_leak *a = x, *b = y;
	uint64_t ta = a->bytes + a->indirect, tb = b->bytes + b->indirect;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind > b->kind ? -1 : 1;
	if (a->blocks != b->blocks)
		return a->blocks < b->blocks ? -1 : 1;
	uintptr_t sa = regrouping() ? a->first : a->stack, sb = regrouping() ? b->first : b->stack;
	return sa < sb ? -1 : sa > sb;
}

/* valgrind's --leak-check=no is MEMCHECK_SCAN=0 (vgcompat.c): the
 * blocks in use at exit are still counted, as valgrind counts them, but
 * none is judged; MEMCHECK_TRACK=0 counts only calls. */
static bool leak_checked(void)
{
	return mc_opt.track && mc_opt.scan;
}

static bool lost_kind(uint32_t kind)
{
	return kind == MC_KIND_DEFINITE || kind == MC_KIND_POSSIBLE;
}

/* --show-leak-kinds (MEMCHECK_VALGRIND_SHOW, valgrind's default
 * definite,possible); every kind with MEMCHECK_VALGRIND_TEXT=all. */
static bool shown_kind(uint32_t kind)
{
	return mc_opt.valgrind_text == MC_VGTEXT_ALL ||
	       (mc_opt.valgrind_text == MC_VGTEXT_FULL && (mc_opt.valgrind_show >> (kind & 3) & 1));
}

/* valgrind's rule (its manual, --errors-for-leak-kinds): a loss record
 * is an error only under --leak-check=full, and only of the kinds that
 * option names, listed or not; under summary no leak is.  memcheck's
 * own rule, for every other region and without valgrind's text: a
 * definitely or possibly lost block fails. */
bool mc_vgtext_leak_fails(bool process, uint32_t kind)
{
	if (!process || mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return lost_kind(kind);
	return mc_opt.valgrind_text >= MC_VGTEXT_FULL && leak_checked() &&
	       (mc_opt.valgrind_errors >> (kind & 3) & 1);
}

/* valgrind counts a suppressed loss record among its suppressed errors
 * ("suppressed: N from N", each record its own context) only where the
 * record would have been an error: of a kind --errors-for-leak-kinds
 * names (valgrind 3.19: a suppressed still reachable record counts under
 * --errors-for-leak-kinds=all, a suppressed definitely lost one not
 * under =reachable).  region.c counts them before and after matching. */
size_t mc_vgtext_error_groups(const struct mc_leak *g, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; g && i < n; i++)
		k += (unsigned)mc_opt.valgrind_errors >> (g[i].kind & 3) & 1;
	return k;
}

/* Whether the process's indirectly lost or still reachable blocks must
 * be matched against the suppressions (region.c).  valgrind matches
 * every loss record, of every kind, listed or not and under
 * --leak-check=summary too, and its LEAK SUMMARY counts a matched one
 * as suppressed: so wherever that summary is written (not -q), or
 * records of those kinds are listed (valgrind -q lists every shown
 * kind's records, in a passing run too: CTest's default
 * --show-reachable=yes), or are errors, or a lost record may be listed
 * in a run that passes (a lost kind left out of --errors-for-leak-kinds).
 * A check suite's own blocks (check.supp) were "still reachable: 1,460
 * bytes in 50 blocks" in a passing test's summary, where valgrind given
 * the same files says suppressed.  A failing run has them matched anyway
 * (region.c).  Not asked otherwise: a passing -q process's unlisted still
 * reachable blocks stay unmatched, as for memcheck's one-line summary
 * (matching them reads the suppression files, /proc/self/maps and symbol
 * tables: 110 -> 258 system calls for bench/suite_test 3 under CTest's
 * options, strace -f -c; doc/costs.md). */
bool mc_vgtext_all_kinds(bool process)
{
	unsigned unlost = 1u << MC_KIND_INDIRECT | 1u << MC_KIND_REACHABLE;
	if (!process || mc_opt.valgrind_text == MC_VGTEXT_NONE)
		return false;
	/* valgrind's XML lists its suppressions' counts */
	if (mc_opt.valgrind_xml && *mc_opt.valgrind_xml)
		return true;
	if (leak_checked() && mc_opt.text != MC_TEXT_NONE && mc_opt.text != MC_TEXT_FAIL)
		return true;
	if (mc_opt.valgrind_text < MC_VGTEXT_FULL)
		return false;
	bool listed = mc_opt.valgrind_text == MC_VGTEXT_ALL ||
		      ((unsigned)mc_opt.valgrind_show & unlost);
	return (listed && mc_opt.text != MC_TEXT_NONE) ||
	       ((unsigned)mc_opt.valgrind_errors & unlost) ||
	       ((unsigned)mc_opt.valgrind_errors & MC_SUPP_LOST) != MC_SUPP_LOST;
}

/* valgrind reads only the first --num-callers frame lines of each
 * suppression entry (m_errormgr.c's loader: the lines past
 * VG_(clo_backtrace_size) skipped), so a stack cut at that depth still
 * matches an entry that goes deeper, where its frames agree; memcheck's
 * stacks are one frame shorter than valgrind's N (its allocation
 * function's frame is one of the N: tools/vgcompat.c). */
int mc_vgtext_supp_lines(void)
{
	return mc_opt.valgrind_text != MC_VGTEXT_NONE
		       ? mc_opt.stack_depth - mc_opt.valgrind_deeper + 1 : 0;
}

/* ---- valgrind's stacks, as deep as its --num-callers ------------------
 *
 * valgrind's frame 0 of a block is the function its preload replaced,
 * and it replaces the allocation functions (and frees) the program
 * itself defines too, not only the C library's and libstdc++'s (its
 * "somalloc" names, which match the executable): gdb's own operator new
 * is valgrind's frame 0, N - 1 of gdb's frames below it.  memcheck's
 * stack of such a block starts inside that operator (its call of
 * malloc): one frame more of it is valgrind's.  Under --num-callers=6
 * gdb -batch's 2,188 loss records were 1,603 here, records that differ
 * only in their sixth frame merged.  So the stacks are taken a frame
 * deeper under valgrind's text (options.c) and cut here: N where frame
 * 0 lies in such a function, else N - 1. */
/* (the names one array of characters, each ended by a NUL, the last
 * by two: not an array of pointers, a relocation each, nor strings in
 * vgtext.o's .rodata.str1.1, which every process's first blocks hold) */
static const char vg_replaced[] =
	"malloc\0calloc\0realloc\0memalign\0valloc\0posix_memalign\0aligned_alloc\0"
	"_Znwm\0_Znam\0_ZnwmRKSt9nothrow_t\0_ZnamRKSt9nothrow_t\0_ZnwmSt11align_val_t\0"
	"_ZnamSt11align_val_t\0_ZnwmSt11align_val_tRKSt9nothrow_t\0"
	"_ZnamSt11align_val_tRKSt9nothrow_t\0"
	"free\0cfree\0_ZdlPv\0_ZdaPv\0_ZdlPvm\0_ZdaPvm\0_ZdlPvRKSt9nothrow_t\0"
	"_ZdaPvRKSt9nothrow_t\0_ZdlPvSt11align_val_t\0_ZdaPvSt11align_val_t\0"
	"_ZdlPvmSt11align_val_t\0_ZdaPvmSt11align_val_t\0"
	"_ZdlPvSt11align_val_tRKSt9nothrow_t\0_ZdaPvSt11align_val_tRKSt9nothrow_t\0";
#define VG_REPLACED 29

/* The program's own definitions of them (its dynamic symbol table: one
 * the C library or libstdc++ calls is there), looked up once. */
static struct {
	_Atomic int state; /* 0 not looked up, 1 under way, 2 known */
	int n;
	uintptr_t lo[VG_REPLACED], len[VG_REPLACED];
} replaced;

static __attribute__((noinline, cold)) void replaced_find(void)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&replaced.state, &expect, 1))
		return;
	const char *name = NULL;
	const void *base = mc_object_base((const void *)getauxval(AT_PHDR), &name);
	for (const char *fn = vg_replaced; base && name && !name[0] && *fn; fn += strlen(fn) + 1) {
		size_t size;
		void *at = mc_sym_in_sized(base, fn, &size);
		if (at && size && replaced.n < VG_REPLACED) {
			replaced.lo[replaced.n] = (uintptr_t)at;
			replaced.len[replaced.n++] = size;
		}
	}
	atomic_store(&replaced.state, 2);
}

static bool in_replaced(uintptr_t ret)
{
	if (atomic_load_explicit(&replaced.state, memory_order_acquire) != 2)
		replaced_find();
	if (atomic_load_explicit(&replaced.state, memory_order_acquire) != 2)
		return false; /* another thread looks them up: none */
	for (int i = 0; i < replaced.n; i++)
		if (ret - 1 - replaced.lo[i] < replaced.len[i])
			return true;
	return false;
}

int mc_vgtext_depth(const uintptr_t *f, int n, int *skip)
{
	*skip = 0;
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE || n <= 0)
		return n;
	int shown = mc_opt.stack_depth - mc_opt.valgrind_deeper;
	for (int i = 0; i < n && i < mc_opt.valgrind_deeper; i++)
		if (in_replaced(f[i])) {
			*skip = i;
			return n - i < shown + 1 ? n - i : shown + 1;
		}
	return n < shown ? n : shown;
}

/* Stack id's frames as valgrind's stack of the same call holds them
 * (mc_vgtext_depth), interned: id itself where they are all of it. */
static uint32_t vg_stack_id(uint32_t id)
{
	const uintptr_t *f;
	uintptr_t copy[MC_MAX_DEPTH];
	int skip, n = mc_stack_get_code(id, &f);
	int keep = mc_vgtext_depth(f, n, &skip);
	if (keep >= n)
		return id;
	memcpy(copy, f + skip, (size_t)keep * sizeof *copy);
	uint32_t cut = mc_stack_intern(copy, keep);
	return cut ? cut : id;
}

/* A group's place among valgrind's records: the frames its record is
 * told by (key, an interned stack), its kind, its lowest block. */
struct vg_key {
	uint32_t key, kind;
	uintptr_t first;
	size_t i;
	uint32_t oldest; /* its group's stack, as stored */
};

static int key_cmp(const void *x, const void *y)
{
	const struct vg_key *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* Group g's stack cut as valgrind's (interned: 0 where it is as it
 * was), and the first frames its record is told by (--leak-resolution:
 * 2 or 4 of valgrind's, its allocation function's one of them, which a
 * stack from the program's own operator holds and another does not). */
static uint32_t vg_cut(const struct mc_leak *g, uint32_t *key)
{
	uint32_t cut = vg_stack_id(g->stack);
	*key = cut;
	if (mc_opt.valgrind_resolution == MC_VGRES_HIGH)
		return cut;
	*key = vg_first_frames(cut, mc_opt.valgrind_resolution == MC_VGRES_LOW ? 2 : 4);
	return cut;
}

/* The first frames of stack cut (a stack as valgrind's holds it:
 * vg_stack_id) that valgrind's first `frames` are, its allocation or
 * free function's one of them, which a stack from the program's own
 * operator holds and another does not: interned, or cut itself where
 * it has no more (a stack not interned: cut) */
static uint32_t vg_first_frames(uint32_t cut, int frames)
{
	const uintptr_t *f;
	uintptr_t copy[MC_MAX_DEPTH];
	int n = mc_stack_get_code(cut, &f);
	int want = frames - (n && in_replaced(f[0]) ? 0 : 1);
	if (want >= n)
		return cut;
	memcpy(copy, f, (size_t)want * sizeof *copy);
	uint32_t k = mc_stack_intern(copy, want);
	return k ? k : cut;
}

size_t mc_vgtext_regroup(struct mc_leak *g, size_t n)
{
	if (mc_opt.valgrind_text == MC_VGTEXT_NONE || n < 1 || !regrouping())
		return n;
	size_t bytes = n * (sizeof(struct vg_key) + sizeof *g);
	struct vg_key *k = mc_map(bytes);
	if (!k)
		return n;
	struct mc_leak *out = (struct mc_leak *)(k + n);
	for (size_t i = 0; i < n; i++) {
		k[i].oldest = g[i].stack;
		g[i].stack = vg_cut(&g[i], &k[i].key);
		k[i].kind = g[i].kind;
		k[i].first = g[i].first;
		k[i].i = i;
	}
	mc_sort(k, n, sizeof *k, key_cmp);
	/* valgrind's ExeContext is the stack's, whatever the kind: each key's
	 * oldest stack over its kinds */
	for (size_t i = 0, j; i < n; i = j) {
		uint32_t oldest = k[i].oldest;
		for (j = i + 1; j < n && k[j].key == k[i].key; j++)
			if (k[j].oldest < oldest)
				oldest = k[j].oldest;
		while (i < j)
			k[i++].oldest = oldest;
	}
	/* one record of each key and kind, its stack its lowest block's;
	 * its first, from here on, the oldest of the stacks it merged */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mc_leak *x = &g[k[i].i];
		if (m && k[i].key == k[i - 1].key && k[i].kind == k[i - 1].kind) {
			out[m - 1].blocks += x->blocks;
			out[m - 1].bytes += x->bytes;
			out[m - 1].indirect += x->indirect;
			if (k[i].oldest < out[m - 1].first)
				out[m - 1].first = k[i].oldest;
		} else {
			out[m] = *x;
			out[m++].first = k[i].oldest;
		}
	}
	memcpy(g, out, m * sizeof *g);
	mc_unmap(k, bytes);
	return m;
}

static const char *const vg_kind[] = { "definitely lost", "indirectly lost", "possibly lost",
				       "still reachable" };

/* valgrind numbers its loss records over all of them, the suppressed
 * ones included ("in loss record 1 of 2" where the other record is
 * suppressed; compared with valgrind 3.19 on a program with two leaks and
 * a suppression for one of them); the suppressed ones are gone from the
 * groups the report gets.  So the process region's records before the
 * matching (region.c), in valgrind's order, their kinds without flags:
 * a listed record's number is its place among them. */
static struct {
	struct mc_leak *v;
	size_t n, bytes;
} all_records;

void mc_vgtext_records(const struct mc_leak *g, size_t n)
{
	if (all_records.v)
		mc_unmap(all_records.v, all_records.bytes);
	all_records.v = NULL;
	all_records.n = 0;
	all_records.bytes = n * sizeof *g;
	if (!n || !(all_records.v = mc_map(all_records.bytes)))
		return;
	memcpy(all_records.v, g, all_records.bytes);
	for (size_t i = 0; i < n; i++)
		all_records.v[i].kind &= 3;
	mc_sort(all_records.v, n, sizeof *g, vg_cmp);
	all_records.n = n;
}

/* Where all_records holds record l, or all_records.n. */
static size_t record_at(const struct mc_leak *l)
{
	struct mc_leak key = *l;
	key.kind &= 3;
	size_t lo = 0, hi = all_records.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = vg_cmp(&all_records.v[mid], &key);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return all_records.n;
}

/* Record l's blocks counted freed (supp_region.c: what a freeres
 * function valgrind runs would have freed): no loss record of
 * valgrind's, numbered with none. */
void mc_vgtext_record_freed(const struct mc_leak *l)
{
	size_t at = record_at(l);
	if (at == all_records.n)
		return;
	memmove(&all_records.v[at], &all_records.v[at + 1],
		(all_records.n - at - 1) * sizeof *all_records.v);
	all_records.n--;
}

/* A record's number and the records' count, valgrind's: from
 * all_records where it holds the record, else its place i in the
 * listed ones. */
static size_t record_number(const struct mc_leak *l, size_t i, size_t listed, size_t *of)
{
	size_t at = record_at(l);
	if (at < all_records.n) {
		*of = all_records.n;
		return at + 1;
	}
	*of = listed;
	return i + 1;
}

/* The process region's records in valgrind's order: a copy of the
 * groups sorted, mmap'd (*bytes of it; the JSON report reads them in
 * memcheck's order after this), or NULL. */
struct mc_leak *mc_vgtext_sorted(const struct mc_region_report *rr, size_t *bytes)
{
	size_t n = rr->nleak_groups;
	*bytes = n * sizeof(struct mc_leak);
	struct mc_leak *v = n && rr->leaks ? mc_map(*bytes) : NULL;
	if (!v)
		return NULL;
	memcpy(v, rr->leaks, *bytes);
	mc_sort(v, n, sizeof *v, vg_cmp);
	return v;
}

bool mc_vgtext_shown(uint32_t kind)
{
	return shown_kind(kind);
}

/* A loss record's heading as valgrind writes it, in its text and in
 * its XML's <text>: "N bytes in B blocks are KIND in loss record K of
 * M"; a record whose blocks lead cliques "N (D direct, I indirect)
 * bytes", N their sum.  l: the i-th of the n listed, sorted.  Returns
 * K, the record's number. */
size_t mc_vgtext_heading(struct mc_buf *b, const struct mc_leak *l, size_t i, size_t n)
{
	char c1[32], c2[32], c3[32], c4[32], c5[32], c6[32];
	if (l->indirect)
		mc_buf_strs(b, mc_commas(l->bytes + l->indirect, c1), " (",
			    mc_commas(l->bytes, c5), " direct, ", mc_commas(l->indirect, c6),
			    " indirect) bytes in ", mc_commas(l->blocks, c2), " blocks are ", NULL);
	else
		mc_buf_strs(b, num_or_unknown(l->bytes, c1), " bytes in ",
			    num_or_unknown(l->blocks, c2), " blocks are ", NULL);
	size_t of, k = record_number(l, i, n, &of);
	mc_buf_strs(b, vg_kind[l->kind & 3], " in loss record ", mc_commas(k, c3), " of ",
		    mc_commas(of, c4), NULL);
	return k;
}

bool mc_vgtext_gen_listed(void)
{
	/* --xml=yes: inside each record's <error>, as valgrind (vgxml.c) */
	if (mc_opt.valgrind_xml && *mc_opt.valgrind_xml)
		return mc_opt.valgrind_text != MC_VGTEXT_NONE && mc_opt.track && mc_opt.scan;
	return mc_opt.valgrind_text != MC_VGTEXT_NONE && mc_opt.text != MC_TEXT_NONE;
}

/* A record's frames named, past the allocation functions (allocfn.c),
 * for mc_supp_format */
struct named {
	struct mc_frame_info *f;
	int n, skip;
};

static const struct mc_frame_info *named_frame(void *arg, int i)
{
	const struct named *z = arg;
	return i + z->skip < z->n ? &z->f[i + z->skip] : NULL;
}

/* A word of code or data at a, where a lies in a loaded object (the
 * decoding below follows addresses read from code: one that is not an
 * object's is not read). */
static bool object_word(uintptr_t a, size_t len, void *out)
{
	if (!mc_object_base((const void *)a, NULL) || !mc_object_base((const void *)(a + len - 1), NULL))
		return false;
	memcpy(out, (const void *)a, len);
	return true;
}

/* Where the call that ends right at ret went: "call rel32" (to a PLT
 * entry: its "jmp *GOT(%rip)", after an endbr64 and a bnd prefix in an
 * IBT build's .plt.sec, followed to the address the dynamic linker put
 * in the slot) or "call *GOT(%rip)" (-fno-plt); 0 when the code is
 * neither. */
static uintptr_t called_from(uintptr_t ret)
{
	unsigned char c[6];
	int32_t d;
	uintptr_t slot = 0, to;
	if (!object_word(ret - 6, 6, c))
		return 0;
	if (c[0] == 0xff && c[1] == 0x15) { /* call *disp32(%rip) */
		memcpy(&d, c + 2, 4);
		slot = ret + (intptr_t)d;
	} else if (c[1] == 0xe8) { /* call rel32 */
		memcpy(&d, c + 2, 4);
		uintptr_t plt = ret + (intptr_t)d;
		unsigned char j[11];
		if (!object_word(plt, sizeof j, j))
			return 0;
		size_t at = 0;
		if (j[0] == 0xf3 && j[1] == 0x0f && j[2] == 0x1e && j[3] == 0xfa)
			at = 4; /* endbr64 */
		if (j[at] == 0xf2)
			at++; /* bnd */
		if (j[at] != 0xff || j[at + 1] != 0x25)
			return plt; /* a direct call: plt is the function */
		memcpy(&d, j + at + 2, 4);
		slot = plt + at + 6 + (intptr_t)d;
	} else
		return 0;
	return object_word(slot, sizeof to, &to) ? to : 0;
}

/* The frames valgrind 3.19's replacements of the C allocation
 * functions put on top of a block's stack (its own vg_replace_malloc.c:
 * posix_memalign, aligned_alloc and valloc allocate through its
 * memalign), measured with tests/prog/plain_leak_family; realloc and
 * reallocarray are not here: of a null pointer valgrind says malloc,
 * and memcheck does not keep what the old pointer was ('...' stays,
 * which matches either).  operator new and its kin: their own names. */
static const char *const vg_tops[][3] = {
	{ "malloc", "malloc" },
	{ "calloc", "calloc" },
	{ "memalign", "memalign" },
	{ "posix_memalign", "memalign", "posix_memalign" },
	{ "aligned_alloc", "memalign" },
	{ "valloc", "memalign" },
};

/* valgrind's first frames of a loss record, which memcheck's stacks,
 * starting at the allocation function's caller, do not hold: from the
 * function of libmemcheck's own that the first frame's call went to,
 * into fi[0..] ("malloc"; "memalign", "posix_memalign"; "_Znwm"); how
 * many (0 where the call is not found, went elsewhere, or is realloc's:
 * '...' then). */
static int called_alloc_fn(uintptr_t ret, struct mc_frame_info *fi)
{
	uintptr_t to = called_from(ret);
	if (!to || !mc_in_range_relaxed(to, &mc_text_lo, &mc_text_len))
		return 0;
	struct mc_frame_info in[MC_MAX_INLINE];
	int k = mc_symbolize_frames(to + 1, in, MC_MAX_INLINE);
	const char *fn = in[k - 1].linkage; /* the function, not one inlined into it */
	if (!fn[0] || !mc_supp_is_alloc_fn(fn))
		return 0;
	if (fn[0] == '_' && fn[1] == 'Z') { /* C++'s: valgrind's frame is the operator's */
		fi[0] = in[k - 1];
		return 1;
	}
	for (size_t i = 0; i < sizeof vg_tops / sizeof vg_tops[0]; i++) {
		if (strcmp(fn, vg_tops[i][0]))
			continue;
		int n = vg_tops[i][2] ? 2 : 1;
		for (int j = 0; j < n; j++) {
			memset(&fi[j], 0, sizeof fi[j]);
			snprintf(fi[j].function, sizeof fi[j].function, "%s", vg_tops[i][j + 1]);
			snprintf(fi[j].linkage, sizeof fi[j].linkage, "%s", vg_tops[i][j + 1]);
		}
		return n;
	}
	return 0;
}

struct led {
	struct named z;
	int lead; /* frames at z.f[z.n...] before the stack's */
};

static const struct mc_frame_info *lead_frame(void *arg, int i)
{
	const struct led *l = arg;
	return i < l->lead ? &l->z.f[l->z.n + i] : named_frame((void *)&l->z, i - l->lead);
}

/* valgrind's --gen-suppressions=all in its text: after each listed
 * record, its entry, named as valgrind names it, the frames as
 * MEMCHECK_GEN_SUPPRESSIONS writes them (supp_region.c: '...' for the
 * allocation function, memcheck's stacks starting at its caller), but
 * for the allocation function's frame, which valgrind writes first
 * ("fun:malloc"): named where the first frame's call to libmemcheck's
 * own function is found (called_alloc_fn).  Entries the same as
 * valgrind's, which each tool's suppressions then match. */
static __attribute__((noinline, cold)) void gen_entry(struct mc_buf *b, const struct mc_leak *l)
{
	const uintptr_t *pcs;
	int npcs = mc_stack_get_code(l->stack, &pcs), cap = MC_MAX_DEPTH * 2;
	size_t bytes = (size_t)(cap + 2) * sizeof(struct mc_frame_info);
	struct named z = { mc_map(bytes), 0, 0 };
	if (!z.f)
		return;
	z.skip = mc_allocfn_lead(pcs, npcs, z.f); /* z.f its room, before the frames */
	for (int i = 0; i < npcs && z.n < cap; i++)
		z.n += mc_symbolize_frames(pcs[i], &z.f[z.n],
					   cap - z.n < MC_MAX_INLINE ? cap - z.n : MC_MAX_INLINE);
	struct mc_supp_stack st = { .frame = named_frame, .arg = &z };
	/* the room after the frames: the allocation function's */
	struct led led = { z, z.skip == 0 && npcs > 0 ? called_alloc_fn(pcs[0], &z.f[z.n]) : 0 };
	if (led.lead) {
		st.frame = lead_frame;
		st.arg = &led;
	}
	mc_supp_format(b, "<insert_a_suppression_name_here>", (int)l->kind, &st);
	mc_unmap(z.f, bytes);
}

void mc_vgtext_gen_entry(struct mc_buf *b, const struct mc_leak *l)
{
	gen_entry(b, l);
}

/* The loss records full or all shows, each followed by an empty line,
 * in valgrind's order. */
static void loss_records(struct mc_buf *b, const char *p, const char *sp,
			 const struct mc_region_report *rr)
{
	size_t n = rr->nleak_groups, bytes;
	if (mc_opt.valgrind_text < MC_VGTEXT_FULL)
		return;
	struct mc_leak *v = mc_vgtext_sorted(rr, &bytes);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!shown_kind(v[i].kind))
			continue;
		mc_buf_strs(b, p, " ", NULL);
		mc_vgtext_heading(b, &v[i], i, n);
		mc_buf_puts(b, "\n");
		mc_text_stack(b, sp, v[i].stack);
		mc_buf_strs(b, sp, "\n", NULL);
		if (mc_opt.gen_suppressions && *mc_opt.gen_suppressions)
			gen_entry(b, &v[i]);
	}
	mc_unmap(v, bytes);
}

/* The process region's blocks by the heuristic that reached them,
 * taken before the suppressions as valgrind counts them: a suppressed
 * block reached so counts there too. */
static struct memcheck_count heuristic_count[MC_HEUR_N];

void mc_vgtext_heuristics(const struct memcheck_count by[MC_HEUR_N])
{
	if (by)
		memcpy(heuristic_count, by, sizeof heuristic_count);
	else
		memset(heuristic_count, 0, sizeof heuristic_count);
}

/* valgrind's names of its heuristics (--leak-check-heuristics) */
static const char *const heuristic_name[MC_HEUR_N] = {
	[MC_HEUR_STDSTRING] = "stdstring",
	[MC_HEUR_LENGTH64] = "length64",
	[MC_HEUR_NEWARRAY] = "newarray",
	[MC_HEUR_MULTIPLE] = "multipleinheritance",
};

/* valgrind's lines under "still reachable": a heading where any block
 * was reached by a heuristic, then one line for each that reached one,
 * its name padded to 19 (%-19s) */
static void heuristic_lines(struct mc_buf *b, const char *p)
{
	bool any = false;
	for (int h = 1; h < MC_HEUR_N; h++)
		any |= heuristic_count[h].blocks != 0;
	if (!any)
		return;
	mc_buf_strs(b, p, "                       of which reachable via heuristic:\n", NULL);
	char c1[32], c2[32];
	for (int h = 1; h < MC_HEUR_N; h++) {
		if (!heuristic_count[h].blocks)
			continue;
		static const char pad[] = "                   ";
		size_t len = strlen(heuristic_name[h]);
		mc_buf_strs(b, p, "                         ", heuristic_name[h],
			    pad + (len < sizeof pad - 1 ? len : sizeof pad - 1), ": ",
			    mc_commas(heuristic_count[h].bytes, c1), " bytes in ",
			    mc_commas(heuristic_count[h].blocks, c2), " blocks\n", NULL);
	}
}

/* A process a fatal signal ends (fatal.c): valgrind's lines before its
 * HEAP SUMMARY, the faulting stack, and for an unmapped address in the
 * main thread its stack-overflow hint.  Under -q (quiet) valgrind says
 * so only for a signal the kernel raised whose action dumps core. */
static void vg_terminating(struct mc_buf *b, const char *p, const char *sp, bool quiet)
{
	int sig = mc_fatal_sig;
	if (!sig)
		return;
	bool core = sig == SIGQUIT || sig == SIGILL || sig == SIGTRAP || sig == SIGABRT ||
		    sig == SIGBUS || sig == SIGFPE || sig == SIGSEGV || sig == SIGXCPU ||
		    sig == SIGXFSZ || sig == SIGSYS;
	bool kernel = mc_fatal_code > 0;
	if (quiet && !(core && kernel))
		return;
	mc_buf_strs(b, sp, "\n", p, " Process terminating with default action of signal ", NULL);
	mc_buf_int(b, sig);
	mc_buf_strs(b, " (", mc_fatal_name(sig), ")\n", NULL);
	if (sig == SIGSEGV && kernel && (mc_fatal_code == SEGV_MAPERR || mc_fatal_code == SEGV_ACCERR)) {
		mc_buf_strs(b, p,
			    mc_fatal_code == SEGV_MAPERR ? "  Access not within mapped region at address "
							 : "  Bad permissions for mapped region at address ",
			    NULL);
		mc_buf_hex(b, mc_fatal_addr);
		mc_buf_puts(b, "\n");
	}
	if (mc_fatal_stack)
		mc_text_stack(b, sp, mc_fatal_stack);
	if (sig == SIGSEGV && kernel && mc_fatal_code == SEGV_MAPERR && mc_fatal_main_thread) {
		mc_buf_strs(b, p, "  If you believe this happened as a result of a stack\n", p,
			    "  overflow in your program's main thread (unlikely but\n", p,
			    "  possible), you can try to increase the size of the\n", p,
			    "  main thread stack using the --main-stacksize= flag.\n", p,
			    "  The main thread stack size used in this run was ", NULL);
		mc_buf_u64(b, mc_fatal_stack_limit());
		mc_buf_puts(b, ".\n");
	}
}

/* valgrind's "%u", without the separators of its HEAP SUMMARY's "%'lu"
 * ("1000 errors from 1000 contexts", valgrind 3.19) */
static const char *plain_num(uint64_t v, char buf[32])
{
	*mc_utoa(buf, v) = 0;
	return buf;
}

static void error_summary(struct mc_buf *b, const char *p, uint64_t errors, uint64_t ctx,
			  uint64_t supp)
{
	char c1[32], c2[32], c3[32], c4[32];
	mc_buf_strs(b, p, " ERROR SUMMARY: ", plain_num(errors, c1), " errors from ",
		    plain_num(ctx, c2), " contexts (suppressed: ", plain_num(supp, c3), " from ",
		    plain_num(supp, c4), ")\n", NULL);
}
/* The name a used_suppression line gives file, one of MEMCHECK_SUPPRESSIONS's:
 * its name in MEMCHECK_VALGRIND's SUPP_NAMES, one for each file, colon-
 * separated, as valgrind's command line spelled it ("my.supp:2", where
 * memcheck reads /dir/my.supp: tools/vgcompat.c), into out; else file.
 * No option of its own: an option's name and table entry lie in the
 * start-up's blocks (0x40 bytes of group 1t's room). */
static const char *supp_shown(const char *file, char *out, size_t cap)
{
	const char *names = mc_valgrind_word("SUPP_NAMES");
	size_t flen = strlen(file);
	for (const char *p = mc_opt.suppressions; names && *names && p && *p;) {
		const char *colon = strchr(p, ':'), *ncolon = strchr(names, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		size_t nlen = ncolon ? (size_t)(ncolon - names) : strlen(names);
		if (len == flen && !memcmp(p, file, len) && nlen && nlen < cap) {
			memcpy(out, names, nlen);
			out[nlen] = 0;
			return out;
		}
		if (!colon || !ncolon)
			break;
		p = colon + 1;
		names = ncolon + 1;
	}
	return file;
}


/* valgrind's -s after its ERROR SUMMARY: the heap errors' contexts
 * fewest errors first (of as many, the newest first, as valgrind's
 * list holds them), each "N errors in context I of M:" and its lines;
 * the suppressions that took records, as its debug lines ("--PID--");
 * then the summary again.  Nothing but the summary where there is
 * neither (valgrind 3.19's text, compared: tests/test_valgrind.c). */
static void vg_error_list(struct mc_buf *b, const char *p, const char *sp,
			  const struct mc_region_report *rr, uint64_t errors, uint64_t ctx,
			  uint64_t supp)
{
	bool shown[VG_CONTEXTS] = { false }, any = false;
	uint64_t n = 0, nsupp = 0;
	int used = atomic_load(&contexts_used);
	for (int i = 0; i < used; i++)
		n += context_text[i].len != 0;
	/* the suppressions used are leak suppressions (supp_region.c), and
	 * under --leak-check=no valgrind checks no leak, so it uses none:
	 * main listed those that took the blocks left at the exit
	 * (tcmalloc's own under memcheck's default files) */
	const struct mc_supp_report *su = leak_checked() ? rr->supp : NULL;
	for (size_t i = 0; su && i < su->nused; i++)
		nsupp += su->used[i].records && su->used[i].name;
	if (!n && !nsupp)
		return;
	char c1[32], c2[32], c3[32];
	for (uint64_t k = 1; k <= n; k++) {
		int min = -1;
		for (int i = used - 1; i >= 0; i--)
			if (context_text[i].len && !shown[i] &&
			    (min < 0 || atomic_load(&context_errors[i]) <
						atomic_load(&context_errors[min])))
				min = i;
		shown[min] = true;
		mc_buf_strs(b, sp, "\n", p, " ", plain_num(atomic_load(&context_errors[min]), c1),
			    " errors in context ", plain_num(k, c2), " of ", plain_num(ctx, c3),
			    ":\n", NULL);
		/* each line under this process's pid: a forked child lists
		 * its parent's contexts too, as valgrind's does */
		const char *t = context_text[min].s, *e = t + context_text[min].len;
		while (t < e) {
			const char *nl = memchr(t, '\n', (size_t)(e - t));
			const char *body = t + 2 < e ? memmem(t + 2, (size_t)(e - t - 2), "==", 2) : NULL;
			nl = nl ? nl + 1 : e;
			body = body && body < nl ? body + 2 : t;
			mc_buf_puts(b, p);
			mc_buf_put(b, body, (size_t)(nl - body));
			t = nl;
		}
		mc_buf_strs(b, sp, "\n", NULL);
	}
	char dp[32], dsp[34];
	memcpy(dp, p, strlen(p) + 1);
	dp[0] = dp[1] = '-';
	dp[strlen(dp) - 2] = dp[strlen(dp) - 1] = '-';
	memcpy(dsp, dp, strlen(dp));
	memcpy(dsp + strlen(dp), " ", 2);
	for (size_t i = 0; su && i < su->nused; i++) {
		const struct mc_supp_used *u = &su->used[i];
		if (!u->records || !u->name)
			continue;
		char cnt[16], name[1024], file[1024], sname[1024];
		if (!any)
			mc_buf_strs(b, dsp, "\n", NULL);
		any = true;
		/* valgrind's "%6d" */
		*mc_utoa(cnt, u->records) = 0;
		size_t w = strlen(cnt);
		mc_buf_strs(b, dp, " used_suppression: ", NULL);
		for (; w < 6; w++)
			mc_buf_puts(b, " ");
		mc_buf_strs(b, cnt, " ", mc_text_escape(u->name, name, sizeof name), " ",
			    mc_text_escape(supp_shown(u->file, sname, sizeof sname), file,
					   sizeof file), ":", NULL);
		mc_buf_int(b, u->name_line);
		mc_buf_strs(b, " suppressed: ", mc_commas(u->bytes, c1), " bytes in ",
			    mc_commas(u->blocks, c2), " blocks\n", NULL);
	}
	if (any)
		mc_buf_strs(b, sp, "\n", NULL);
	error_summary(b, p, errors, ctx, supp);
}

void mc_vgtext_emit(const struct mc_region_report *rr)
{
	const struct memcheck_result *r = rr->r;
	bool quiet = mc_opt.text == MC_TEXT_FAIL;
	char p[32], sp[34], c1[32], c2[32], c3[32], c4[32], c5[32];
	mc_text_pid(p);
	memcpy(sp, p, strlen(p));
	memcpy(sp + strlen(p), " ", 2); /* "==pid== ": an empty line, a frame's prefix */
	struct mc_buf b = { 0 };
	vg_terminating(&b, p, sp, quiet);
	/* valgrind counts every free it is given (but NULL's), a refused
	 * one too: 1 allocs, 2 frees for a double free; memcheck's frees
	 * are the blocks it freed, its heap errors counted apart */
	uint64_t frees = r->frees == MEMCHECK_UNKNOWN
				 ? r->frees
				 : r->frees + r->double_frees + r->invalid_frees;
	/* and a refused realloc's new block as allocated (its mc_malloc
	 * counts it before it looks the old block up): 2 allocs, 2 frees,
	 * 110 bytes for malloc(10), free, realloc of it to 100 */
	uint64_t refused_bytes, refused = mc_account_refused_reallocs(&refused_bytes);
	uint64_t allocs = r->allocs == MEMCHECK_UNKNOWN ? r->allocs : r->allocs + refused;
	uint64_t allocated = r->bytes_allocated == MEMCHECK_UNKNOWN
				     ? r->bytes_allocated
				     : r->bytes_allocated + refused_bytes;
	/* one empty line after the header's (vgcompat.c), as valgrind's */
	if (!quiet)
		mc_buf_strs(&b, sp, "\n", p, " HEAP SUMMARY:\n", p, "     in use at exit: ",
			    num_or_unknown(r->live_bytes, c1), " bytes in ",
			    num_or_unknown(r->live_blocks, c2), " blocks\n", p,
			    "   total heap usage: ", num_or_unknown(allocs, c3), " allocs, ",
			    num_or_unknown(frees, c4), " frees, ",
			    num_or_unknown(allocated, c5), " bytes allocated\n", sp, "\n",
			    NULL);
	/* the heap errors valgrind counts: none past its cutoff */
	uint64_t errors = r->double_frees + r->invalid_frees - atomic_load(&errors_dropped);
	uint64_t ctx = error_contexts(errors), supp = 0;
	if (leak_checked()) {
		loss_records(&b, p, sp, rr);
		if (mc_opt.valgrind_text >= MC_VGTEXT_FULL) {
			for (size_t i = 0; i < rr->nleak_groups && rr->leaks; i++)
				if (mc_vgtext_leak_fails(true, rr->leaks[i].kind)) {
					errors++;
					ctx++;
				}
			supp = rr->errors_suppressed;
		}
	}
	const struct memcheck_count *k[] = { &r->definitely_lost, &r->indirectly_lost,
					     &r->possibly_lost, &r->still_reachable,
					     &r->suppressed };
	static const char *const word[] = { "    definitely lost: ", "    indirectly lost: ",
					    "      possibly lost: ", "    still reachable: ",
					    "         suppressed: " };
	if (quiet) {
		/* valgrind -q: nothing more; memcheck's verdict where the
		 * region fails (the exit status changes) */
	} else if (!leak_checked()) {
		mc_buf_strs(&b, p, " For a detailed leak analysis, rerun with: --leak-check=full\n",
			    sp, "\n", NULL);
	} else if (r->live_blocks == 0) {
		mc_buf_strs(&b, p, " All heap blocks were freed -- no leaks are possible\n", sp,
			    "\n", NULL);
	} else {
		mc_buf_strs(&b, p, " LEAK SUMMARY:\n", NULL);
		for (int i = 0; i < 5; i++) {
			mc_buf_strs(&b, p, word[i], num_or_unknown(k[i]->bytes, c1), " bytes in ",
				    num_or_unknown(k[i]->blocks, c2), " blocks\n", NULL);
			if (k[i] == &r->still_reachable)
				heuristic_lines(&b, p);
		}
		/* valgrind's hint where a block is listed under full: not
		 * where the suppressions took every one */
		if (mc_opt.valgrind_text == MC_VGTEXT_SUMMARY &&
		    (r->definitely_lost.blocks | r->indirectly_lost.blocks |
		     r->possibly_lost.blocks | r->still_reachable.blocks))
			mc_buf_strs(&b, p, " Rerun with --leak-check=full to see details of "
				    "leaked memory\n", NULL);
		else if (r->still_reachable.blocks && !shown_kind(MC_KIND_REACHABLE))
			mc_buf_strs(&b, p, " Reachable blocks (those to which a pointer was found) "
				    "are not shown.\n", p, " To see them, rerun with: "
				    "--leak-check=full --show-leak-kinds=all\n", NULL);
		mc_buf_strs(&b, sp, "\n", NULL);
	}
	/* valgrind's end, nothing after it: its verdict is the ERROR
	 * SUMMARY and the exit status (--error-exitcode), so memcheck's own
	 * PASS/FAIL line is not written here (a log compared line for line
	 * with valgrind's had one more).  At verbosity 1 without -s valgrind
	 * points at -s; with -s or -v (-q -s too) it lists the contexts and
	 * the suppressions used, then says the summary again. */
	bool list = mc_opt.valgrind_list == MC_VGLIST_LIST;
	if (!quiet && mc_opt.valgrind_list == MC_VGLIST_HINT)
		mc_buf_strs(&b, p, " For lists of detected and suppressed errors, "
			    "rerun with: -s\n", NULL);
	/* -q -s: the summary and the list all the same, as valgrind's */
	if (!quiet || list)
		error_summary(&b, p, errors, ctx, supp);
	if (list)
		vg_error_list(&b, p, sp, rr, errors, ctx, supp);
	/* -q and a clean run: nothing, not even the text's file opened */
	if (b.len)
		mc_text_write(b.s, b.len);
	mc_buf_free(&b);
}
