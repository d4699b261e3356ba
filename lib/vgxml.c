/*
 * vgxml.c - the process's end as valgrind's XML output, protocol 4
 * (valgrind's docs/internals/xml-output-protocol4.txt), for the tools
 * that read it in valgrind's place: CI plugins, IDEs and scripts that
 * run `valgrind --xml=yes --xml-file=F` and parse F.  Under
 * MEMCHECK_VALGRIND_XML (memcheck's valgrind command line,
 * tools/vgcompat.c, sets it from --xml-file or --xml-fd).
 *
 * The records are the ones vgtext.c lists, in its order, each with its
 * heading as valgrind's text writes it (vgtext.c's mc_vgtext_heading):
 * one <error> per loss record of a listed kind, its <unique> the
 * record's number less one (valgrind numbers every loss record, listed
 * or not, from 0 where no other error came first), its bytes the record's
 * and the indirect ones it leads, as valgrind's <leakedbytes> counts
 * them.  The layout is valgrind 3.19's to the blank line (compared with
 * its output on the same programs: tests/test_valgrind.c), so that a
 * reader that splits on lines reads it too.
 *
 * The head (preamble, pid, ppid, the command lines, RUNNING) is written
 * as a checked program starts, as valgrind writes it (mc_vgxml_begin,
 * from life.c), so that what forked children append to the same file
 * comes after it; the rest at the process's end, in one write.  A forked
 * child writes as valgrind's does: its end appended to its parent's
 * file (the pattern has no %p, or a descriptor), or a file of its own
 * whose head has no RUNNING status.
 *
 * Not written: valgrind's first frame of each stack (its own
 * replacement of malloc, in vgpreload_memcheck-*.so; memcheck's stacks
 * start at the allocation's caller, as its text does), the frames' ip as
 * valgrind's (valgrind loads a position-independent program at
 * 0x108000, the kernel elsewhere).
 *
 * The heap errors (a double free, a free inside a block or of a pointer
 * memcheck does not know) are InvalidFree errors, written as they
 * happen, each context once, as valgrind writes them, and counted in
 * <errorcounts>; memcheck's text then says nothing of them.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* s as XML text: the five characters XML gives a meaning escaped;
 * bytes below 0x20 but tab and newline, which XML 1.0 forbids even as
 * references, as '?'. */
static void xml_put(struct mc_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;"
			      : c == '"' ? "&quot;" : c == '\'' ? "&apos;" : NULL;
		if (e)
			mc_buf_puts(b, e);
		else
			mc_buf_put(b, c < 0x20 && c != '\t' && c != '\n' ? "?" : (const char *)&c, 1);
	}
}

/* A word of the preamble's "Command:" line, as valgrind writes it there:
 * a control character or a byte past ASCII as '_' (the <argv> elements
 * keep them), the rest escaped. */
static void xml_put_command_word(struct mc_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x80)
			mc_buf_put(b, "_", 1);
		else
			xml_put(b, s + i, 1);
	}
}

static void xml_elem(struct mc_buf *b, const char *indent, const char *tag, const char *s,
		     size_t n)
{
	mc_buf_strs(b, indent, "<", tag, ">", NULL);
	xml_put(b, s, n);
	mc_buf_strs(b, "</", tag, ">\n", NULL);
}

/* valgrind's ip: 0x and upper-case digits */
static void xml_ip(struct mc_buf *b, uintptr_t pc)
{
	char d[2 + 16 + 1], *w = d + sizeof d - 1;
	*w = 0;
	do
		*--w = "0123456789ABCDEF"[pc & 15];
	while (pc >>= 4);
	*--w = 'x';
	*--w = '0';
	mc_buf_puts(b, w);
}

/* valgrind's elapsed time, "DD:HH:MM:SS.mmm " (its trailing space too) */
static void xml_time(struct mc_buf *b, double seconds)
{
	uint64_t ms = seconds > 0 ? (uint64_t)(seconds * 1000 + 0.5) : 0;
	uint64_t part[] = { ms / 86400000, ms / 3600000 % 24, ms / 60000 % 60, ms / 1000 % 60 };
	char t[40], *w = t;
	for (int i = 0; i < 4; i++) {
		if (part[i] < 10)
			*w++ = '0';
		w = mc_utoa(w, part[i]);
		*w++ = i < 3 ? ':' : '.';
	}
	*w++ = (char)('0' + ms % 1000 / 100);
	*w++ = (char)('0' + ms % 100 / 10);
	*w++ = (char)('0' + ms % 10);
	*w++ = ' ';
	*w = 0;
	mc_buf_puts(b, t);
}

static void xml_status(struct mc_buf *b, const char *state, double seconds)
{
	mc_buf_strs(b, "<status>\n  <state>", state, "</state>\n  <time>", NULL);
	xml_time(b, seconds);
	mc_buf_puts(b, "</time>\n</status>\n\n");
}

/* One frame: ip, then what is known of obj, fn, dir, file, line, in
 * that order, as the protocol has them */
static void xml_frame(struct mc_buf *b, uintptr_t pc, const struct mc_frame_info *fi,
		      bool inlined)
{
	/* valgrind's ip for a caller's frame: the call's last byte, one
	 * before the return address the stack holds */
	mc_buf_puts(b, "    <frame>\n      <ip>");
	xml_ip(b, pc ? pc - 1 : 0);
	mc_buf_puts(b, "</ip>\n");
	if (fi->object[0])
		xml_elem(b, "      ", "obj", fi->object, strlen(fi->object));
	if (fi->function[0] && strcmp(fi->function, "???") != 0) {
		char shown[MC_SHOWN_MAX];
		const char *fn = mc_supp_below_main(fi->function)
					 ? "(below main)" /* as vgtext.c's frames */
					 : mc_frame_shown(fi, inlined, shown, sizeof shown);
		xml_elem(b, "      ", "fn", fn, strlen(fn));
	}
	if (fi->file[0]) {
		const char *slash = mc_last_slash(fi->file);
		/* valgrind's dir: the line table's directory, joined to the
		 * unit's compile directory where it is relative */
		char comp[MC_SHOWN_MAX];
		if (fi->file[0] != '/' && mc_symbolize_comp_dir(pc, comp, sizeof comp)) {
			mc_buf_puts(b, "      <dir>");
			xml_put(b, comp, strlen(comp));
			if (slash) {
				mc_buf_puts(b, "/");
				xml_put(b, fi->file, (size_t)(slash - fi->file));
			}
			mc_buf_puts(b, "</dir>\n");
		} else if (slash && slash > fi->file) {
			xml_elem(b, "      ", "dir", fi->file, (size_t)(slash - fi->file));
		}
		const char *name = slash ? slash + 1 : fi->file;
		xml_elem(b, "      ", "file", name, strlen(name));
		mc_buf_puts(b, "      <line>");
		mc_buf_int(b, fi->line);
		mc_buf_puts(b, "</line>\n");
	}
	mc_buf_puts(b, "    </frame>\n");
}

/* A stack's frames up to main, as mc_text_stack shows them */
static void xml_stack(struct mc_buf *b, uint32_t id)
{
	const uintptr_t *f;
	int skip, n = mc_stack_get_code(id, &f);
	n = mc_vgtext_depth(f, n, &skip);
	f += skip;
	mc_buf_puts(b, "  <stack>\n");
	struct mc_frame_info fi[MC_MAX_INLINE];
	for (int i = 0; i < n; i++) {
		int k = mc_symbolize_frames(f[i], fi, MC_MAX_INLINE);
		for (int j = 0; j < k; j++)
			xml_frame(b, f[i], &fi[j], j + 1 < k);
		if (mc_text_is_main(fi, k))
			break;
	}
	mc_buf_puts(b, "  </stack>\n");
}

/* characters, not pointers: an array of pointers is a relocation each,
 * which the dynamic linker writes at every load */
/* valgrind's uniques: each error takes the next, a context's repeat
 * too (whose element is not written again), and the loss records come
 * after them; each context's unique (+ 1) and count for errorcounts */
static _Atomic unsigned heap_errors;
static _Atomic unsigned ctx_unique[MC_VG_CONTEXTS], ctx_count[MC_VG_CONTEXTS];

static void xml_hex(struct mc_buf *b, uint64_t v)
{
	char d[20], *w = d + sizeof d - 1;
	*w = 0;
	do
		*--w = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	mc_buf_strs(b, "0x", w, NULL);
}

static const char leak_kind[][20] = { "Leak_DefinitelyLost", "Leak_IndirectlyLost",
				      "Leak_PossiblyLost", "Leak_StillReachable" };

/* --gen-suppressions=all under --xml=yes: the record's entry inside
 * its <error>, as valgrind's XML (protocol 4) holds it: <sname> (the
 * name without its angle brackets), <skind>, <skaux>, an <sframe> a
 * frame line (<fun> or <obj>; memcheck's '...' as a <fun> of its own),
 * and the entry's text whole in <rawtext>; and, as valgrind 3.19, the
 * same element once more after the </error>.  A record with no entry (a
 * stack with nothing past the allocation function: a comment) has no
 * <suppression>. */
static __attribute__((noinline, cold)) void xml_suppression(struct mc_buf *b,
							    const struct mc_leak *l)
{
	struct mc_buf e = { 0 };
	mc_vgtext_gen_entry(&e, l);
	if (!e.s || e.oom || e.s[0] != '{') {
		mc_buf_free(&e);
		return;
	}
	mc_buf_puts(b, "  <suppression>\n");
	int line = 0;
	for (const char *p = e.s, *end = e.s + e.len; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *t = p;
		while (n && *t == ' ')
			t++, n--;
		if (line == 1) {
			bool angled = n >= 2 && t[0] == '<' && t[n - 1] == '>';
			xml_elem(b, "    ", "sname", t + angled, n - 2 * angled);
		} else if (line == 2) {
			xml_elem(b, "    ", "skind", t, n);
		} else if (line == 3) {
			xml_elem(b, "    ", "skaux", t, n);
		} else if (line > 3 && n && *t != '}') {
			bool obj = n > 4 && !strncmp(t, "obj:", 4), fun = n > 4 && !strncmp(t, "fun:", 4);
			const char *tag = obj ? "obj" : "fun";
			size_t skip = obj || fun ? 4 : 0;
			mc_buf_strs(b, "    <sframe> <", tag, ">", NULL);
			xml_put(b, t + skip, n - skip);
			mc_buf_strs(b, "</", tag, "> </sframe>\n", NULL);
		}
		p += n + (size_t)(t - p) + (nl != NULL);
	}
	mc_buf_puts(b, "    <rawtext>\n<![CDATA[\n");
	mc_buf_put(b, e.s, e.len);
	mc_buf_puts(b, "]]>\n    </rawtext>\n  </suppression>\n");
	mc_buf_free(&e);
}

static void xml_records(struct mc_buf *b, const struct mc_region_report *rr)
{
	size_t n = rr->nleak_groups, bytes;
	struct mc_leak *v = mc_vgtext_sorted(rr, &bytes);
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!mc_vgtext_shown(v[i].kind))
			continue;
		struct mc_buf text = { 0 };
		size_t k = mc_vgtext_heading(&text, &v[i], i, n);
		mc_buf_puts(b, "<error>\n  <unique>");
		xml_hex(b, atomic_load(&heap_errors) + k - 1);
		mc_buf_strs(b, "</unique>\n  <tid>1</tid>\n  <kind>", leak_kind[v[i].kind & 3],
			    "</kind>\n  <xwhat>\n", NULL);
		xml_elem(b, "    ", "text", text.s ? text.s : "", text.len);
		mc_buf_free(&text);
		mc_buf_puts(b, "    <leakedbytes>");
		mc_buf_u64(b, v[i].bytes + v[i].indirect);
		mc_buf_puts(b, "</leakedbytes>\n    <leakedblocks>");
		mc_buf_u64(b, v[i].blocks);
		mc_buf_puts(b, "</leakedblocks>\n  </xwhat>\n");
		xml_stack(b, v[i].stack);
		/* valgrind 3.19 writes the entry twice: inside the <error>
		 * and again right after it (measured) */
		struct mc_buf sb = { 0 };
		if (mc_opt.gen_suppressions && *mc_opt.gen_suppressions)
			xml_suppression(&sb, &v[i]);
		if (sb.s)
			mc_buf_put(b, sb.s, sb.len);
		mc_buf_puts(b, "</error>\n\n");
		if (sb.s)
			mc_buf_put(b, sb.s, sb.len);
		mc_buf_free(&sb);
	}
	mc_unmap(v, bytes);
}

/* MEMCHECK_VALGRIND_XML: the destination, a line, then valgrind's
 * words, each ended by a newline (vgcompat.c) */
static const char *xml_vargv(void)
{
	const char *v = mc_opt.valgrind_xml ? mc_opt.valgrind_xml : "";
	const char *nl = strchr(v, '\n');
	return nl ? nl + 1 : "";
}

static void xml_dest(char *out, size_t cap)
{
	const char *v = mc_opt.valgrind_xml ? mc_opt.valgrind_xml : "";
	size_t n = strcspn(v, "\n");
	n = n < cap ? n : cap - 1;
	memcpy(out, v, n);
	out[n] = 0;
}

/* valgrind's verbosity from its words, as it takes them (1, -q makes it
 * 0, each -v one more): the library's text under --xml=yes is silent
 * whatever they say (vgcompat.c), so MEMCHECK_TEXT does not tell. */
static bool xml_quiet(void)
{
	const char *w = xml_vargv();
	int verbosity = 1;
	for (const char *e; *w && (e = strchr(w, '\n')); w = e + 1) {
		size_t n = (size_t)(e - w);
		if ((n == 2 && !memcmp(w, "-q", 2)) || (n == 7 && !memcmp(w, "--quiet", 7)))
			verbosity = 0;
		else if ((n == 2 && !memcmp(w, "-v", 2)) || (n == 9 && !memcmp(w, "--verbose", 9)))
			verbosity++;
	}
	return verbosity == 0;
}

/* The suppressions used and how many records each took, as valgrind
 * counts its suppressed loss records */
static void xml_suppcounts(struct mc_buf *b, const struct mc_supp_report *s)
{
	/* the contexts newest first, as valgrind's list holds them */
	mc_buf_puts(b, "<errorcounts>\n");
	for (int i = mc_vgtext_contexts_used() - 1; i >= 0; i--) {
		unsigned u = atomic_load(&ctx_unique[i]), n = atomic_load(&ctx_count[i]);
		if (!u || !n)
			continue;
		mc_buf_puts(b, "  <pair>\n    <count>");
		mc_buf_u64(b, n);
		mc_buf_puts(b, "</count>\n    <unique>");
		xml_hex(b, u - 1);
		mc_buf_puts(b, "</unique>\n  </pair>\n");
	}
	mc_buf_puts(b, "</errorcounts>\n\n");
	/* valgrind -q leaves them out, an empty line in their place */
	if (xml_quiet()) {
		mc_buf_puts(b, "\n</valgrindoutput>\n\n");
		return;
	}
	mc_buf_puts(b, "<suppcounts>\n");
	for (size_t i = 0; s && i < s->nused; i++) {
		const struct mc_supp_used *u = &s->used[i];
		if (!u->records || !u->name)
			continue;
		mc_buf_puts(b, "  <pair>\n    <count>");
		mc_buf_u64(b, u->records);
		mc_buf_puts(b, "</count>\n");
		xml_elem(b, "    ", "name", u->name, strlen(u->name));
		mc_buf_puts(b, "  </pair>\n");
	}
	mc_buf_puts(b, "</suppcounts>\n\n</valgrindoutput>\n\n");
}

/* words, each ended by end (NUL for /proc/self/cmdline, newline for
 * MEMCHECK_VALGRIND_XML's), as <exe> then <arg>s */
static void xml_words(struct mc_buf *b, const char *s, size_t n, char end)
{
	bool first = true;
	for (size_t i = 0; i < n;) {
		const char *e = memchr(s + i, end, n - i);
		size_t len = e ? (size_t)(e - (s + i)) : n - i;
		xml_elem(b, "    ", first ? "exe" : "arg", s + i, len);
		first = false;
		i += len + 1;
	}
}

/* Everything before the run's errors: the preamble, the processes, the
 * command lines, and (not in a forked child) RUNNING */
static void xml_head(struct mc_buf *b)
{
	mc_buf_puts(b, "<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n<protocolversion>4"
		       "</protocolversion>\n<protocoltool>memcheck</protocoltool>\n\n<preamble>\n"
		       "  <line>" MC_VG_PREAMBLE "</line>\n");
	/* an exec'd image's first word the file name execve was given, as
	 * valgrind's <exe> and "Command:" say (vgtext.c) */
	struct mc_buf argv = { 0 };
	const char *exe = mc_vgtext_words(&argv);
	const char *w = argv.s ? argv.s : "";
	if (exe && argv.len) {
		struct mc_buf with = { 0 };
		mc_buf_put(&with, exe, strlen(exe) + 1);
		mc_buf_put(&with, w + strlen(w) + 1, argv.len - strlen(w) - 1);
		mc_buf_free(&argv);
		argv = with;
		w = argv.s ? argv.s : "";
	}
	mc_buf_puts(b, "  <line>Command:");
	for (size_t i = 0; i < argv.len; i += strlen(w + i) + 1) {
		mc_buf_puts(b, " ");
		xml_put_command_word(b, w + i, strlen(w + i));
	}
	mc_buf_puts(b, "</line>\n</preamble>\n\n<pid>");
	mc_buf_int(b, (int)mc_pid());
	mc_buf_puts(b, "</pid>\n<ppid>");
	mc_buf_int(b, (int)syscall(SYS_getppid));
	mc_buf_puts(b, "</ppid>\n<tool>memcheck</tool>\n\n<args>\n  <vargv>\n");
	const char *va = xml_vargv();
	xml_words(b, va, strlen(va), '\n');
	mc_buf_puts(b, "  </vargv>\n  <argv>\n");
	xml_words(b, w, argv.len, 0);
	mc_buf_puts(b, "  </argv>\n</args>\n\n");
	mc_buf_free(&argv);
	if (!mc_vgtext_forked())
		xml_status(b, "RUNNING", 0);
}

/* Where the XML goes: a descriptor (digits), or the pattern's file for
 * this process */
static int xml_fd(const char *dest)
{
	int fd = 0;
	for (const char *p = dest; *p; p++) {
		if (*p < '0' || *p > '9' || fd > 1 << 20)
			return -1;
		fd = fd * 10 + (*p - '0');
	}
	return *dest ? fd : -1;
}

static int xml_open(const char *dest)
{
	if (xml_fd(dest) >= 0)
		return xml_fd(dest);
	char path[4096];
	size_t bad;
	if (mc_text_path(dest, (long)mc_pid(), path, sizeof path, &bad) < 0) {
		mc_log("MEMCHECK_VALGRIND_XML=%.*s%.*s: expected an absolute file name, %%p and "
		       "%%%% its only %% escapes, or a descriptor's number", MC_CUT_VALUE(dest));
		return -1;
	}
	int f = mc_open_append(path);
	if (f < 0)
		mc_log("cannot open MEMCHECK_VALGRIND_XML=%s: %s", path, mc_open_error(errno));
	return f;
}

/* A write that failed (a full disk, /dev/full: harden42's sweep found it
 * unsaid, the XML cut or empty), said once a process, as MEMCHECK_REPORT's
 * and MEMCHECK_LOG's are. */
static __attribute__((noinline, cold)) void xml_write_failed(const char *dest, int e)
{
	static pid_t said_by;   /* a forked child says its own */
	if (said_by == mc_pid())
		return;
	said_by = mc_pid();
	mc_log("cannot write to MEMCHECK_VALGRIND_XML=%s: %s; this process's XML is not whole",
	       dest, strerror(e));
}

/* Write what b holds to the XML's destination, in one write */
static void xml_write(struct mc_buf *b)
{
	char dest[4096];
	xml_dest(dest, sizeof dest);
	int saved = errno;
	int fd = xml_open(dest);
	if (fd >= 0) {
		int e = b->s ? mc_write_all(fd, b->s, b->len) : 0;
		if (xml_fd(dest) < 0)
			mc_sys_close(fd);
		if (e)
			xml_write_failed(dest, e);
	}
	errno = saved;
}

static double vgxml_t0; /* the process's start, for the statuses' times */

void mc_vgxml_begin_slow(void)
{
	vgxml_t0 = mc_now();
	struct mc_buf b = { 0 };
	xml_head(&b);
	xml_write(&b);
	mc_buf_free(&b);
}

bool mc_vgxml_heap_error(int slot, bool fresh, uintptr_t ptr, uint64_t size,
			 uint32_t alloc_stack, uint32_t free_stack, uint32_t now_stack,
			 uintptr_t block, const struct mc_stack_place *on)
{
	if (!mc_opt.valgrind_xml || !*mc_opt.valgrind_xml)
		return false;
	unsigned u = atomic_fetch_add(&heap_errors, 1);
	if (slot >= 0) {
		atomic_fetch_add(&ctx_count[slot], 1);
		if (fresh)
			atomic_store(&ctx_unique[slot], u + 1);
	}
	if (!fresh)
		return true;
	/* valgrind's words for a free it refuses, and where the address
	 * lies: a freed block (memcheck frees nothing twice), inside a
	 * live one, or in none it knows */
	struct mc_buf b = { 0 };
	mc_buf_puts(&b, "<error>\n  <unique>");
	xml_hex(&b, u);
	mc_buf_puts(&b, "</unique>\n  <tid>1</tid>\n  <kind>InvalidFree</kind>\n"
		       "  <what>Invalid free() / delete / delete[] / realloc()</what>\n");
	xml_stack(&b, now_stack);
	mc_buf_puts(&b, "  <auxwhat>");
	mc_vgtext_address(&b, ptr, size, free_stack != 0, block, on, "</auxwhat>\n  <auxwhat>",
			  true);
	mc_buf_puts(&b, "</auxwhat>\n");
	if (free_stack) {
		xml_stack(&b, free_stack);
		if (alloc_stack)
			mc_buf_puts(&b, "  <auxwhat>Block was alloc'd at</auxwhat>\n");
	}
	if (alloc_stack && (free_stack || block))
		xml_stack(&b, alloc_stack);
	mc_buf_puts(&b, "</error>\n\n");
	xml_write(&b);
	mc_buf_free(&b);
	mc_symbolize_end();
	return true;
}

void mc_vgxml_emit(const struct mc_region_report *rr)
{
	char dest[4096];
	xml_dest(dest, sizeof dest);
	/* valgrind's text says nothing where it writes XML */
	if (!*dest) {
		mc_vgtext_emit(rr);
		return;
	}
	if (mc_vgtext_silent())
		return;
	struct mc_buf b = { 0 };
	/* a forked child's end goes on in its parent's file, after the
	 * head its parent wrote at start; a file of its own (%p) starts
	 * with a head of its own, without RUNNING, as valgrind's child's */
	if (mc_vgtext_forked() && strstr(dest, "%p") && xml_fd(dest) < 0)
		xml_head(&b);
	mc_buf_puts(&b, "\n");
	xml_status(&b, "FINISHED", vgxml_t0 > 0 ? mc_now() - vgxml_t0 : rr->r->seconds);
	if (mc_opt.track && mc_opt.scan)
		xml_records(&b, rr);
	xml_suppcounts(&b, rr->supp);
	xml_write(&b);
	mc_buf_free(&b);
}
