/*
 * test_symcache.c - MEMCHECK_CACHE (lib/symcache.c, memcheck-cache(5)):
 * the frames a process named with file:line kept for the next one.
 *   - the text and JSON reports are the same with the cache off, cold
 *     and warm, for inlined frames, C++, a dlopen'd library and a plain
 *     leak, under every allocator; warm, libdw is not loaded (C++,
 *     jemalloc's and tcmalloc's stacks included);
 *   - a truncated or damaged file changes nothing; a file that is not
 *     the user's alone (group-writable, or another owner's) is not read,
 *     while the same file owned and 0600 is (its doctored answer shows);
 *   - a program rebuilt (a new build ID) gets its new lines;
 *   - the suppressions' questions of a program's debug strings
 *     (may_name) are answered from the cache: a doctored answer shows,
 *     and a program rebuilt with the name a suppression asks for gets
 *     its own answer, not the old build's;
 *   - the symbol tables' names suppression matching and system frames
 *     take (quick names, the C library's among them) are kept too, keyed
 *     by what decides the table: a debug file appearing between two runs
 *     gives the new names at once.
 * Every other test runs with the harness's cache (build/tests/cache).
 */
#include <check.h>
#include <dirent.h>
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* What may differ between two runs of one program: process ids,
 * addresses (ASLR), resident-set figures and times.  Text lines with the
 * RSS or a time are dropped; in the JSON those keys' values. */
static char *normal(const char *s)
{
	size_t n = strlen(s);
	char *out = calloc(1, n + 1), *w = out;
	ck_assert(out);
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) + 1 : strlen(s);
		char line[65536];
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, s, len);
		line[len] = 0;
		s += len;
		if (line[0] != '{' && (strstr(line, "RSS:") || strstr(line, " s)") ||
				       strstr(line, "retains")))
			continue;
		for (char *p = line; *p;) {
			if (p[0] == '0' && p[1] == 'x') {
				p += 2;
				while (strchr("0123456789abcdef", *p) && *p)
					p++;
				continue;
			}
			if (*p == '"') {
				char *q = strchr(p + 1, '"');
				if (q && q[1] == ':' && (memmem(p, (size_t)(q - p), "rss", 3) ||
							 memmem(p, (size_t)(q - p), "seconds", 7) ||
							 memmem(p, (size_t)(q - p), "retained", 8) ||
							 (q - p == 4 && memcmp(p, "\"pid", 4) == 0))) {
					p = q + 2;
					while (*p && strchr("0123456789.e-", *p))
						p++;
					continue;
				}
			}
			if (*p == '=' || *p == '[') {
				/* ==PID== and memcheck[PID] */
				char *q = p + 1 + (*p == '=' && p[1] == '=');
				char *d = q;
				while (*d >= '0' && *d <= '9')
					d++;
				if (d > q && (*d == '=' || *d == ']')) {
					p = d;
					continue;
				}
			}
			*w++ = *p++;
		}
	}
	*w = 0;
	return out;
}

/* One run of prog under allocator i with cache (a directory, or "off");
 * its normalised text and report. */
static void run(int i, const char *prog, const char *arg, const char *cache, const char *extra,
		char **text, char **json, struct h_res *keep)
{
	struct h_res x;
	const char *env[] = { h_env("MEMCHECK_CACHE=%s", cache), "MEMCHECK_TEXT=full",
			      extra ? extra : "MEMCHECK_EXITCODE=0", NULL };
	H_EXEC(&x, .prog = prog, .args = arg ? H_LIST(arg) : NULL, .alloc = i, .flags = H_PRELOAD,
	       .env = env);
	size_t len;
	char *rep = h_read_file(x.report, &len);
	ck_assert_msg(rep && len, "%s: no report", x.label);
	if (text)
		*text = normal(x.r.err);
	if (json)
		*json = normal(rep);
	free(rep);
	if (keep)
		*keep = x;
	else
		h_res_free(&x);
}

/* The cache's one versioned subdirectory in dir. */
static const char *subdir(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_msg(d, "%s: no cache directory", dir);
	const char *found = NULL;
	for (struct dirent *e; (e = readdir(d));)
		if (strncmp(e->d_name, "v1-", 3) == 0)
			found = h_env("%s/%s", dir, e->d_name);
	closedir(d);
	ck_assert_msg(found, "%s: no v1- subdirectory", dir);
	struct stat st;
	ck_assert(stat(found, &st) == 0 && (st.st_mode & 0777) == 0700);
	return found;
}

/* Each file of the cache's subdirectory to fn. */
static int each_file(const char *dir, void (*fn)(const char *path))
{
	const char *sub = subdir(dir);
	DIR *d = opendir(sub);
	ck_assert(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		/* supp-*: the suppression files' (suppcache.c), not a module's */
		if (e->d_name[0] != '.' && strncmp(e->d_name, "supp-", 5) != 0) {
			const char *p = h_env("%s/%s", sub, e->d_name);
			struct stat st;
			ck_assert_msg(stat(p, &st) == 0 && st.st_size > 0, "%s: missing or empty", p);
			if (fn)
				fn(p);
			n++;
		}
	closedir(d);
	return n;
}

static void is_private(const char *path)
{
	struct stat st;
	ck_assert_msg(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "%s: not 0600", path);
}

/* dw: libdw is not loaded with a warm cache, under every allocator:
 * the C++ library's frames and the dynamic loader's (_dl_start_user, a
 * symbol of no size, under every constructor's stack: the C++ runtime's
 * emergency pool, jemalloc's and tcmalloc's start) are named by
 * elfmod.c's reading as libdw names them. */
static const struct {
	const char *prog, *arg;
	bool dw;
} progs[] = {
	{ "plain_leak_inlined", NULL, true },   /* inlined frames */
	{ "cxx_new", "leak", true },            /* C++ */
	{ "corpus/dlopen_tls", NULL, true },    /* a dlopen'd library's frames */
	{ "plain_leak_direct", NULL, true },
	/* the C library's quick names: suppressions matched on them,
	 * its frames printed with them */
	{ "plain_libc_stacks", NULL, true },
	{ "plain_supp", "lost", true },
};

/* Quick names' files: a build ID with the state of its debug file's
 * path after it ('Q' and 8 bytes: 18 hex digits more than the ID's). */
static int quick_files;
/* The records of mc_symbolize_may_name's answers (memcheck-cache(5): a
 * record's max 10, MC_MAX_INLINE + 2) in a module's file, and their
 * answers. */
static int name_records, name_answers;
static void count_names(const char *path);

static void count_quick(const char *path)
{
	const char *base = strrchr(path, '/') + 1;
	size_t n = strlen(base);
	quick_files += n > 18 && strncmp(base + n - 18, "51", 2) == 0 && n - 18 <= 128;
}

START_TEST(same_reports)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
		const char *prog = h_prog(progs[k].prog), *dir = h_tmppath("cache");
		char *t[3], *j[3];
		run(_i, prog, progs[k].arg, "off", NULL, &t[0], &j[0], NULL);
		run(_i, prog, progs[k].arg, dir, NULL, &t[1], &j[1], NULL);
		ck_assert_msg(each_file(dir, is_private) > 0, "%s: nothing cached", prog);
		quick_files = 0;
		each_file(dir, count_quick);
		/* the C library's names: it has no DWARF of its own */
		ck_assert_msg(strcmp(progs[k].prog, "plain_libc_stacks") != 0 || quick_files > 0,
			      "%s under %s: no quick names cached", prog, h_allocator_name(_i));
		/* the suppressions' questions of the program's own debug
		 * strings, answered for the next process */
		name_records = 0;
		each_file(dir, count_names);
		ck_assert_msg(strcmp(progs[k].prog, "plain_supp") != 0 || name_records > 0,
			      "%s under %s: no may_name answers cached", prog, h_allocator_name(_i));
		run(_i, prog, progs[k].arg, dir, NULL, &t[2], &j[2], NULL);
		for (int m = 1; m < 3; m++) {
			ck_assert_msg(strcmp(t[0], t[m]) == 0, "%s under %s, %s cache: text\n%s\n---\n%s",
				      prog, h_allocator_name(_i), m == 1 ? "cold" : "warm", t[0], t[m]);
			ck_assert_msg(strcmp(j[0], j[m]) == 0, "%s under %s, %s cache: JSON\n%s\n---\n%s",
				      prog, h_allocator_name(_i), m == 1 ? "cold" : "warm", j[0], j[m]);
		}
		/* Warm, the same report without libdw. */
		if (!progs[k].dw)
			goto next;
		struct h_res x;
		run(_i, prog, progs[k].arg, dir, "LD_DEBUG=files", NULL, NULL, &x);
		ck_assert_msg(!strstr(x.r.err, "libdw.so"), "%s under %s: libdw loaded with a warm cache",
			      prog, h_allocator_name(_i));
		h_res_free(&x);
	next:
		for (int m = 0; m < 3; m++) {
			free(t[m]);
			free(j[m]);
		}
	}
}
END_TEST

/* The record checksum of memcheck-cache(5): from 0xcbf29ce484222325 ^
 * size, each whole 8-byte word xored in, multiplied by 0x100000001b3,
 * the high half xored into the low; then each byte left the same
 * without the fold; the high half xored into the low, the low half. */
static uint32_t sum(const unsigned char *p, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	uint32_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *s = (unsigned char *)h_read_file(path, len);
	ck_assert(s);
	return s;
}

static void spew(const char *path, const unsigned char *s, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert(fd >= 0);
	ck_assert(write(fd, s, len) == (ssize_t)len);
	close(fd);
}

/* Every "store" of the file's records made "stxre", checksums mended:
 * a well-formed file whose answer is not libdw's. */
static void doctor(const char *path)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	for (size_t i = 0; i + 12 <= len;) {
		uint32_t size;
		memcpy(&size, s + i + 4, 4);
		ck_assert(size <= len - i - 12);
		for (size_t k = i + 12; k + 5 <= i + 12 + size; k++)
			if (memcmp(s + k, "store", 5) == 0)
				s[k + 2] = 'x';
		uint32_t h = sum(s + i + 12, size);
		memcpy(s + i + 8, &h, 4);
		i += 12 + size;
	}
	spew(path, s, len);
	free(s);
}

static void truncate_half(const char *path)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	spew(path, s, len / 2 + 3);
	free(s);
}

static void garble(const char *path)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	for (size_t k = 5; k < len; k += 7)
		s[k] ^= 0x5a;
	spew(path, s, len);
	free(s);
}

static void group_writable(const char *path)
{
	ck_assert(chmod(path, 0620) == 0);
}

static void owner_only(const char *path)
{
	ck_assert(chmod(path, 0600) == 0);
}

static void someone_else(const char *path)
{
	ck_assert(chown(path, 65534, 65534) == 0);
}

START_TEST(damaged_files)
{
	const char *prog = h_prog("plain_leak_inlined"), *dir = h_tmppath("cache");
	char *t0, *j0, *t, *j;
	run(H_GLIBC, prog, NULL, "off", NULL, &t0, &j0, NULL);
	ck_assert_msg(strstr(t0, "store"), "no inlined frame: %s", t0);
	void (*harm[])(const char *) = { truncate_half, garble, NULL };
	for (int h = 0; harm[h]; h++) {
		run(H_GLIBC, prog, NULL, dir, NULL, NULL, NULL, NULL);
		each_file(dir, harm[h]);
		run(H_GLIBC, prog, NULL, dir, NULL, &t, &j, NULL);
		ck_assert_msg(strcmp(t, t0) == 0 && strcmp(j, j0) == 0, "harm %d: %s", h, t);
		free(t);
		free(j);
	}
	/* A fresh cache, its answers doctored: read while the file is the
	 * user's alone, not when others may write it or own it. */
	dir = h_tmppath("cache");
	run(H_GLIBC, prog, NULL, dir, NULL, NULL, NULL, NULL);
	each_file(dir, doctor);
	run(H_GLIBC, prog, NULL, dir, NULL, &t, &j, NULL);
	ck_assert_msg(strstr(t, "stxre") && !strstr(t, "store"), "the doctored file unread: %s", t);
	free(t);
	free(j);
	each_file(dir, group_writable);
	run(H_GLIBC, prog, NULL, dir, NULL, &t, &j, NULL);
	ck_assert_msg(strcmp(t, t0) == 0 && strcmp(j, j0) == 0, "group-writable file read: %s", t);
	free(t);
	free(j);
	if (geteuid() == 0) {
		each_file(dir, owner_only);
		each_file(dir, someone_else);
		run(H_GLIBC, prog, NULL, dir, NULL, &t, &j, NULL);
		ck_assert_msg(strcmp(t, t0) == 0 && strcmp(j, j0) == 0, "foreign file read: %s", t);
		free(t);
		free(j);
	}
	free(t0);
	free(j0);
}
END_TEST

/* dir/name.c holding text, built -g -O0 into dir/name. */
static const char *compile(const char *dir, const char *name, const char *text)
{
	const char *src = h_env("%s/%s.c", dir, name), *bin = h_env("%s/%s", dir, name);
	FILE *f = fopen(src, "w");
	ck_assert(f);
	fputs(text, f);
	fclose(f);
	struct h_res x;
	H_EXEC(&x, .prog = "/usr/bin/cc", .args = H_LIST("-g", "-O0", "-o", bin, src),
	       .no_report = true, .text = "");
	h_expect_exit(&x, 0);
	h_res_free(&x);
	return bin;
}

/* A program rebuilt with its leak two lines further down: new build ID,
 * new answer, though the old one is cached at the same offset. */
static const char *build(const char *dir, int blank)
{
	return compile(dir, "leak",
		       h_env("#include <stdlib.h>\n%svoid *volatile p;\n"
			     "int main(void) { p = malloc(8); p = 0; return 0; }\n",
			     blank ? "\n\n" : ""));
}

START_TEST(rebuilt_module)
{
	const char *dir = h_tmppath("rebuild"), *cache = h_tmppath("cache");
	mkdir(dir, 0700);
	char *t;
	for (int blank = 0; blank <= 2; blank += 2) {
		const char *bin = build(dir, blank);
		for (int r = 0; r < 2; r++) {
			run(H_GLIBC, bin, NULL, cache, NULL, &t, NULL, NULL);
			const char *want = blank ? "leak.c:5)" : "leak.c:3)";
			ck_assert_msg(strstr(t, want), "rebuilt with %d blank lines, run %d: no %s in\n%s",
				      blank, r, want, t);
			free(t);
		}
	}
}
END_TEST

/* A program whose leak is allocated in fn(), inlined into main (the
 * symbol table names main: only the debug information names fn), built
 * into dir/name. */
static const char *build_fn(const char *dir, const char *name, const char *fn)
{
	return compile(dir, name,
		       h_env("#include <stdlib.h>\nvoid *volatile p;\n"
			     "static inline __attribute__((always_inline)) void %s(void)\n"
			     "{ p = malloc(24); p = 0; }\n"
			     "int main(void) { %s(); return 0; }\n", fn, fn));
}

/* The file's name records and answers counted; where doctor says,
 * every answer made "no", checksums mended: a well-formed file whose
 * answers are not the program's. */
static void names_pass(const char *path, bool doctor)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	for (size_t i = 0; i + 24 <= len;) {
		uint32_t size;
		uint16_t max, n;
		memcpy(&size, s + i + 4, 4);
		memcpy(&max, s + i + 20, 2);
		memcpy(&n, s + i + 22, 2);
		ck_assert(size <= len - i - 12);
		name_records += max == 10;
		for (size_t e = i + 24, k = 0; max == 10 && k < n; k++) {
			name_answers++;
			s[e + 8] &= !doctor;
			e += 10 + s[e + 9];
		}
		uint32_t h = sum(s + i + 12, size);
		memcpy(s + i + 8, &h, 4);
		i += 12 + size;
	}
	if (doctor)
		spew(path, s, len);
	free(s);
}

static void count_names(const char *path)
{
	names_pass(path, false);
}

static void answer_no(const char *path)
{
	names_pass(path, true);
}

/* dir's suppression files (suppcache.c's supp-*) removed */
static void drop_supp(const char *dir)
{
	const char *sub = subdir(dir);
	DIR *d = opendir(sub);
	ck_assert(d);
	for (struct dirent *e; (e = readdir(d));)
		if (strncmp(e->d_name, "supp-", 5) == 0)
			ck_assert(unlink(h_env("%s/%s", sub, e->d_name)) == 0);
	closedir(d);
}

/* prog's JSON report with the suppression file supp and cache */
static char *report_with(const char *prog, const char *supp, const char *cache)
{
	struct h_res x;
	const char *env[] = { h_env("MEMCHECK_CACHE=%s", cache), h_env("MEMCHECK_SUPPRESSIONS=%s", supp),
			      "MEMCHECK_EXITCODE=0", NULL };
	H_EXEC(&x, .prog = prog, .flags = H_PRELOAD, .env = env);
	size_t len;
	char *rep = h_read_file(x.report, &len);
	ck_assert_msg(rep && len, "%s: no report", x.label);
	h_res_free(&x);
	return rep;
}

/* bin's report with a suppression of leaks allocated in leak_here_fn:
 * is its leak suppressed? */
static bool suppressed(const char *bin, const char *supp, const char *cache)
{
	char *rep = report_with(bin, supp, cache);
	bool lost = strstr(rep, "\"definitely_lost\":{\"blocks\":1,\"bytes\":24}");
	bool kept = strstr(rep, "\"name\":\"leak_here\"");
	ck_assert_msg(lost != kept, "%s: lost %d, suppressed %d\n%s", bin, lost, kept, rep);
	free(rep);
	return kept;
}

/* may_name's answers: a program that has no leak_here_fn asks its debug
 * strings for the suppression's name (no: kept for every offset); the
 * same program rebuilt with leak_here_fn inlined where it leaks (a new
 * build ID) has its leak suppressed, cold and warm, which the old
 * build's "no" would have prevented (its frames' quick names do not
 * match: only the debug information's "yes" leads to the inlined
 * frame); that build's own answers made "no" in its file, the next run
 * does not suppress it: the answers are read. */
START_TEST(name_answers_kept)
{
	const char *dir = h_tmppath("names"), *cache = h_tmppath("cache");
	mkdir(dir, 0700);
	const char *supp = h_env("%s/leak.supp", dir);
	FILE *f = fopen(supp, "w");
	ck_assert(f);
	fprintf(f, "{\n   leak_here\n   Memcheck:Leak\n   ...\n   fun:leak_here_fn\n   ...\n}\n");
	fclose(f);
	const char *old = build_fn(dir, "old", "somewhere_else");
	for (int r = 0; r < 2; r++)
		ck_assert_msg(!suppressed(old, supp, cache), "run %d: suppressed without the name", r);
	name_records = name_answers = 0;
	each_file(cache, count_names);
	ck_assert_msg(name_records == 1 && name_answers > 0,
		      "%d name records, %d answers after a cold and a warm run", name_records,
		      name_answers);
	const char *bin = build_fn(dir, "new", "leak_here_fn");
	for (int r = 0; r < 2; r++)
		ck_assert_msg(suppressed(bin, supp, cache), "rebuilt, run %d: not suppressed", r);
	const char *own = h_tmppath("cache");
	ck_assert(suppressed(bin, supp, own));
	ck_assert(suppressed(bin, supp, own));
	each_file(own, answer_no);
	/* the verdicts kept beside the parsed set (suppcache.c) would
	 * answer first: gone with it, the answers are asked again */
	drop_supp(own);
	ck_assert_msg(!suppressed(bin, supp, own), "the doctored answers unread");
}
END_TEST

/* A tool (cp, objcopy, strip) that must succeed. */
static void run_tool(const char *prog, const char *const *args)
{
	struct h_res x;
	H_EXEC(&x, .prog = prog, .args = args, .no_report = true, .text = "");
	h_expect_exit(&x, 0);
	h_res_free(&x);
}

/* plain_leak_direct copied to dir/leak, stripped, with a .gnu_debuglink
 * to its debug file, which is held in hold/leak.debug (in none of the
 * places looked in); its path. */
static const char *stripped_leak(const char *dir, const char *hold)
{
	const char *prog = h_env("%s/leak", dir), *held = h_env("%s/leak.debug", hold);
	mkdir(dir, 0700);
	mkdir(hold, 0700);
	run_tool("/bin/cp", H_LIST(h_prog("plain_leak_direct"), prog));
	run_tool("/usr/bin/objcopy", H_LIST("--only-keep-debug", prog, held));
	run_tool("/usr/bin/strip", H_LIST(prog));
	run_tool("/usr/bin/objcopy", H_LIST(h_env("--add-gnu-debuglink=%s", held), prog));
	return prog;
}

/* A stripped program (no .symtab: its dynamic table names its frames)
 * whose .gnu_debuglink file appears in .debug/ beside it between two
 * runs with one cache: the second run names leak() from the debug file,
 * as a run without the cache does.  Were the first run's names kept
 * under the build ID and the build-ID debug file's state alone, the
 * second would print them.  (A debug package's file appearing under
 * /usr/lib/debug/.build-id changes the key itself, the stat of that
 * path: not writable by a test, so not tested here.) */
START_TEST(debug_file_appears)
{
	const char *dir = h_tmppath("stripped"), *cache = h_tmppath("cache");
	const char *hold = h_tmppath("held");   /* none of the places looked in */
	const char *prog = stripped_leak(dir, hold), *held = h_env("%s/leak.debug", hold);
	mkdir(h_env("%s/.debug", dir), 0700);
	char *t[2], *j;
	for (int r = 0; r < 2; r++) {
		run(H_GLIBC, prog, NULL, cache, NULL, &t[r], NULL, NULL);
		ck_assert_msg(!strstr(t[r], ": leak (") && !strstr(t[r], "plain_leak_direct.c"),
			      "run %d: leak() named without its debug file:\n%s", r, t[r]);
	}
	ck_assert_msg(strcmp(t[0], t[1]) == 0, "cold and warm differ:\n%s\n---\n%s", t[0], t[1]);
	free(t[0]);
	free(t[1]);
	ck_assert(rename(held, h_env("%s/.debug/leak.debug", dir)) == 0);
	char *t0, *j0;
	run(H_GLIBC, prog, NULL, "off", NULL, &t0, &j0, NULL);
	ck_assert_msg(strstr(t0, ": leak (") && strstr(t0, "plain_leak_direct.c"),
		      "leak() unnamed with its debug file:\n%s", t0);
	for (int r = 0; r < 2; r++) {
		run(H_GLIBC, prog, NULL, cache, NULL, &t[0], &j, NULL);
		ck_assert_msg(strcmp(t[0], t0) == 0 && strcmp(j, j0) == 0,
			      "run %d after the debug file came: stale names\n%s\n---\n%s", r, t0, t[0]);
		free(t[0]);
		free(j);
	}
	free(t0);
	free(j0);
}
END_TEST

/* prog's report with supp and cache: is a record suppressed by the
 * entry named name? */
static bool suppressed_by(const char *prog, const char *supp, const char *cache, const char *name)
{
	char *rep = report_with(prog, supp, cache);
	bool kept = strstr(rep, h_env("\"name\":\"%s\"", name));
	free(rep);
	return kept;
}

/* Suppression verdicts kept across processes (suppcache.c) follow what
 * names the frames: a stripped program's leak, matched by the name only
 * its .gnu_debuglink file holds, is not suppressed while that file is
 * in none of the places looked in (cold and warm: the verdict kept),
 * and is once it appears beside the program; a program rebuilt at the
 * same path (another build ID) is matched afresh. */
START_TEST(verdicts_follow_names)
{
	const char *dir = h_tmppath("stripped"), *cache = h_tmppath("cache");
	const char *hold = h_tmppath("held");
	const char *prog = stripped_leak(dir, hold), *held = h_env("%s/leak.debug", hold);
	mkdir(h_env("%s/.debug", dir), 0700);
	const char *supp = h_env("%s/leak.supp", dir);
	FILE *f = fopen(supp, "w");
	ck_assert(f);
	fprintf(f, "{\n   by-leak\n   Memcheck:Leak\n   ...\n   fun:leak\n   ...\n}\n"
		   "{\n   by-leak-here\n   Memcheck:Leak\n   ...\n   fun:leak_here_fn\n   ...\n}\n");
	fclose(f);
	for (int r = 0; r < 2; r++)
		ck_assert_msg(!suppressed_by(prog, supp, cache, "by-leak"),
			      "run %d: suppressed without the debug file", r);
	ck_assert(rename(held, h_env("%s/.debug/leak.debug", dir)) == 0);
	ck_assert_msg(suppressed_by(prog, supp, "off", "by-leak"), "not suppressed, no cache");
	for (int r = 0; r < 2; r++)
		ck_assert_msg(suppressed_by(prog, supp, cache, "by-leak"),
			      "run %d after the debug file came: the old verdict", r);
	const char *bin = build_fn(dir, "again", "somewhere_else");
	for (int r = 0; r < 2; r++)
		ck_assert_msg(!suppressed_by(bin, supp, cache, "by-leak-here"), "run %d", r);
	ck_assert_str_eq(build_fn(dir, "again", "leak_here_fn"), bin);
	for (int r = 0; r < 2; r++)
		ck_assert_msg(suppressed_by(bin, supp, cache, "by-leak-here"),
			      "rebuilt, run %d: the old build's verdict", r);
}
END_TEST


/* Lines of a calls log (calls_from_trace) whose path is path (exact)
 * or lies under it (!exact), for ops (space-separated, each with its
 * space: "open "; NULL: any). */
static int calls_on(const char *calls, const char *ops, const char *path, bool exact)
{
	int n = 0;
	size_t plen = strlen(path);
	for (const char *l = calls; *l;) {
		const char *eol = strchr(l, '\n'), *sp = strchr(l, ' ');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		if (sp && sp < l + len) {
			size_t at = (size_t)(sp + 1 - l), rest = len - at;
			char op[16] = { 0 };
			if (at < sizeof op)
				memcpy(op, l, at);
			if ((!ops || (op[0] && strstr(ops, op))) &&
			    (exact ? rest == plen : rest > plen) && memcmp(sp + 1, path, plen) == 0)
				n++;
		}
		l += len + (eol != NULL);
	}
	return n;
}

#define STRACE "/usr/bin/strace"

/* Whether path lies under one of dirs (':' separated). */
static bool under_dirs(const char *path, size_t plen, const char *dirs)
{
	for (const char *d = dirs; d && *d;) {
		const char *colon = strchr(d, ':');
		size_t len = colon ? (size_t)(colon - d) : strlen(d);
		if (len && len <= plen && strncmp(path, d, len) == 0)
			return true;
		d = colon ? colon + 1 : d + len;
	}
	return false;
}

/* An strace of the calls that look at files, in the log's words (the
 * preloaded shim tests/prog/shim/count_calls.c wrote it before): "OP PATH" (open, openat, stat, lstat, access; fstat left out)
 * for paths under dirs, and "geteuid".  memcheck makes its own as
 * system calls (lib/seccomp.c), which a shim of the C library's
 * functions no longer sees. */
static char *calls_from_trace(const char *t, const char *dirs)
{
	size_t cap = strlen(t) + 1, n = 0;
	char *out = calloc(1, cap);
	ck_assert(out);
	for (const char *l = t; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		const char *line = h_env("%.*s", (int)len, l);
		l += len + (eol != NULL);
		line += strspn(line, "0123456789 ");
		const char *op = NULL;
		if (strncmp(line, "geteuid(", 8) == 0) {
			n += (size_t)snprintf(out + n, cap - n, "geteuid\n");
			continue;
		}
		if (strncmp(line, "openat(AT_FDCWD, \"", 17) == 0)
			op = "openat";
		else if (strncmp(line, "open(\"", 6) == 0)
			op = "open";
		else if (strncmp(line, "newfstatat(AT_FDCWD, \"", 21) == 0 ||
			 strncmp(line, "stat(\"", 6) == 0)
			op = strstr(line, "AT_SYMLINK_NOFOLLOW") ? "lstat" : "stat";
		else if (strncmp(line, "lstat(\"", 7) == 0)
			op = "lstat";
		else if (strncmp(line, "access(\"", 8) == 0 ||
			 strncmp(line, "faccessat(AT_FDCWD, \"", 21) == 0 ||
			 strncmp(line, "faccessat2(AT_FDCWD, \"", 22) == 0)
			op = "access";
		if (!op)
			continue;
		const char *path = strchr(line, '"') + 1, *q = strchr(path, '"');
		if (!q || !under_dirs(path, (size_t)(q - path), dirs))
			continue;
		if (n + strlen(op) + (size_t)(q - path) + 3 < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s %.*s\n", op, (int)(q - path), path);
	}
	return out;
}

/* prog (args after it, NULL-terminated) run by strace with libmemcheck
 * and so preloaded, MEMCHECK_TEXT=full, the cache and the settings in
 * sets (NULL-terminated); its status in *r (the caller frees), its
 * calls on paths under dirs as calls_from_trace gives them, or NULL
 * (said) where strace is missing or ptrace refused. */
static char *traced_calls(const char *const *prog, const char *so, const char *cache,
			  const char *const *sets, const char *dirs, struct h_run *r)
{
	if (access(STRACE, X_OK) != 0 || !h_can_ptrace()) {
		printf("note: %s missing or ptrace refused; skipping\n", STRACE);
		return NULL;
	}
	const char *trace = h_tmppath("trace");
	unlink(trace);
	const char *argv[64];
	size_t n = 0;
	const char *head[] = { STRACE, "-f", "-qq", "-e",
			       "trace=open,openat,stat,lstat,newfstatat,access,faccessat,faccessat2,"
			       "geteuid",
			       "-o", trace, "-E",
			       h_env("LD_PRELOAD=%s%s%s", h_lib(), so ? " " : "", so ? so : ""),
			       "-E", "MEMCHECK_TEXT=full", "-E", h_env("MEMCHECK_CACHE=%s", cache),
			       /* no start-up open of the program's file for the
				* programs rule (lib/programs.c, an openat since
				* session 57, an openat2 this trace did not list
				* before): the opens counted are the exit's */
			       "-E", "MEMCHECK_PROGRAMS=*" };
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		argv[n++] = head[i];
	for (; sets && *sets && n < 50; sets++) {
		argv[n++] = "-E";
		argv[n++] = *sets;
	}
	argv[n++] = "--";
	for (; *prog && n < 63; prog++)
		argv[n++] = *prog;
	argv[n] = NULL;
	ck_assert_msg(h_run(r, argv, NULL, 0, NULL) == 0, "cannot start %s", STRACE);
	char *t = h_read_file(trace, NULL);
	ck_assert_msg(t, "no trace at %s", trace);
	char *calls = calls_from_trace(t, dirs);
	free(t);
	unlink(trace);
	return calls;
}

/* prog run runs times under allocator i with one cache (twice: a fresh
 * one, warm the second time), the last run's calls on paths under dirs
 * (':' separated) as traced_calls gives them (the caller frees; NULL:
 * no strace). */
static char *calls_of(int i, const char *so, const char *prog, const char *cache,
		      const char *dirs, int runs)
{
	char *calls = NULL;
	const char *path[] = { strchr(prog, '/') ? prog : h_prog(prog), NULL };
	for (int r = 0; r < runs; r++) {
		struct h_run x;
		free(calls);
		calls = traced_calls(path, so, cache, NULL, dirs, &x);
		if (!calls)
			return NULL;
		ck_assert_msg(x.exit_code == 0, "%s under %s: %s", prog, h_allocator_name(i),
			      h_status(&x));
		ck_assert_msg(strstr(x.err, "definitely lost"), "%s under %s: no leak reported",
			      prog, h_allocator_name(i));
		h_run_free(&x);
	}
	return calls;
}

static char *warm_calls(int i, const char *so, const char *prog, const char *cache,
			const char *dirs)
{
	return calls_of(i, so, prog, cache, dirs, 2);
}

/* A warm process opens none of the cache's directory and asks the
 * effective user once: the directory is checked ours once (one lstat),
 * its files opened by their paths.  It was opened, fstat'ed and closed
 * around each file, each file and the directory checked with a geteuid
 * of their own: 4 opens and 6 geteuid calls in a measured /bin/date's
 * exit.  Counted by strace (traced_calls), under each allocator, in a
 * program whose exit reads the suppressions' file and its own frames'
 * file. */
START_TEST(dir_looked_at_once)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *cache = h_tmppath("cache");
	char *calls = warm_calls(_i, so, "plain_leak_direct", cache, cache);
	if (!calls)
		return;
	const char *dir = subdir(cache);
	int on_dir = calls_on(calls, NULL, dir, true), files = calls_on(calls, NULL, dir, false);
	int euid = h_count_lines(calls, "geteuid");
	ck_assert_msg(on_dir <= 1 && euid <= 1,
		      "%s: warm, the directory looked at %d times (want 1), geteuid called %d "
		      "times (want 1):\n%s", h_allocator_name(_i), on_dir, euid, calls);
	ck_assert_msg(files >= 2, "%s: warm, %d cache files opened, want 2 or more (suppressions, "
		      "frames):\n%s", h_allocator_name(_i), files, calls);
	free(calls);
}
END_TEST

/* A warm measured exit opens no file of the cache that is not there.
 * An object whose names and DWARF are its file's alone keeps its quick
 * frames beside its full ones, in its build ID's file: its key's file
 * never exists, yet quick_get opened it at every measured exit where a
 * report's frame (the peak's site, fill here, in no leak's stack) had
 * no quick record there, one failing open before the full frames
 * answered (bench/suite_test's insert).  Counted by strace
 * (traced_calls) with the JSON report memcheck run sets, under each
 * allocator: each cache file the warm run opened exists after it. */
START_TEST(warm_opens_only_files_there)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *dir = h_tmppath("peak"), *cache = h_tmppath("cache");
	mkdir(dir, 0700);
	const char *bin = compile(dir, "peak",
				  "#include <stdlib.h>\nvoid *volatile p;\n"
				  "static void *volatile held[64];\n"
				  "__attribute__((noinline)) static void fill(void)\n"
				  "{ for (int i = 0; i < 64; i++) held[i] = malloc(32); }\n"
				  "int main(void) { fill(); for (int i = 0; i < 64; i++) free(held[i]);\n"
				  "p = malloc(8); p = 0; return 0; }\n");
	const char *prog[] = { bin, NULL };
	const char *sets[] = { h_env("MEMCHECK_REPORT=%s", h_tmppath("report.jsonl")), NULL };
	char *calls = NULL;
	for (int r = 0; r < 2; r++) {
		struct h_run x;
		free(calls);
		calls = traced_calls(prog, so, cache, sets, cache, &x);
		if (!calls)
			return;
		ck_assert_msg(strstr(x.err, "definitely lost") && strstr(x.err, "(fill)"),
			      "%s, run %d: no leak or no peak site reported:\n%s",
			      h_allocator_name(_i), r, x.err);
		h_run_free(&x);
	}
	const char *sub = subdir(cache);
	size_t dlen = strlen(sub);
	int opened = 0;
	for (const char *l = calls; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		const char *line = h_env("%.*s", (int)len, l);
		l += len + (eol != NULL);
		const char *path = strchr(line, ' ');
		if (strncmp(line, "open", 4) != 0 || !path || strncmp(path + 1, sub, dlen) != 0 ||
		    path[1 + dlen] != '/')
			continue;
		opened++;
		ck_assert_msg(access(path + 1, F_OK) == 0, "%s: warm, %s opened, which is not "
			      "there:\n%s", h_allocator_name(_i), path + 1, calls);
	}
	ck_assert_msg(opened >= 2, "%s: warm, %d cache files opened, want 2 or more (suppressions, "
		      "frames):\n%s", h_allocator_name(_i), opened, calls);
	free(calls);
}
END_TEST

/* A stripped program whose .gnu_debuglink file is in none of its places
 * (Debian's programs without their debug package, /bin/date among them):
 * a warm report looks at each place, and at the build-ID debug file's
 * path, once.  The verdicts' check of the places (suppcache.c) and the
 * reading of the program's table for its frames each looked: 4 system
 * calls twice in a measured /bin/date's exit (elfmod.c's memo of paths
 * without a file, a report's).  Nor does it open the program's own file:
 * its names are the cache's while the places hold no file (the key
 * file's link record); a warm /bin/date opened, mapped and read it at
 * every exit (6 system calls) to find its dynamic table's names again. */
START_TEST(link_places_looked_at_once)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *dir = h_tmppath("stripped"), *cache = h_tmppath("cache");
	const char *prog = stripped_leak(dir, h_tmppath("held"));
	char *calls = warm_calls(_i, so, prog, cache,
				 h_env("%s:/usr/lib/debug/.build-id/:/usr/lib/debug%s", dir, dir));
	if (!calls)
		return;
	const char *places[] = { h_env("%s/leak.debug", dir), h_env("%s/.debug/leak.debug", dir),
				 h_env("/usr/lib/debug%s/leak.debug", dir) };
	for (size_t p = 0; p < sizeof places / sizeof *places; p++) {
		int n = calls_on(calls, "access ", places[p], true);
		ck_assert_msg(n == 1, "%s: warm, %s looked at %d times (want 1):\n%s",
			      h_allocator_name(_i), places[p], n, calls);
	}
	int own = calls_on(calls, "open openat ", prog, true);
	ck_assert_msg(own == 0, "%s: warm, the program's own file opened %d times (want 0):\n%s",
		      h_allocator_name(_i), own, calls);
	/* each object's build-ID debug file's path: named by build IDs,
	 * which only the log shows here */
	const char *id_dir = "/usr/lib/debug/.build-id/";
	for (const char *l = strstr(calls, id_dir); l; l = strstr(l + 1, id_dir)) {
		const char *eol = strchr(l, '\n');
		const char *path = eol ? h_env("%.*s", (int)(eol - l), l) : l;
		int n = calls_on(calls, "stat open ", path, true);
		ck_assert_msg(n == 1, "%s: warm, %s looked at %d times (want 1):\n%s",
			      h_allocator_name(_i), path, n, calls);
	}
	free(calls);
}
END_TEST

/* The cache file of the stripped program's names whose link record
 * (memcheck-cache(5): max 11) names leak.debug: one byte of the name
 * changed, so that its checksum no longer holds. */
static int links_damaged;

static void damage_link(const char *path)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	const unsigned char *at = memmem(s, len, "leak.debug", 11);
	if (at) {
		s[at - s] ^= 0x20;
		spew(path, s, len);
		links_damaged++;
	}
	free(s);
}

/* The stripped program's names are taken from the cache only with the
 * link record whose places they hold for: with it damaged (skipped as
 * any damaged record is), the next warm process reads the program's
 * own file again, and appends a link record, so the one after it does
 * not.  A torn append that kept the names but lost the record is the
 * same case. */
START_TEST(link_record_damaged)
{
	const char *dir = h_tmppath("stripped"), *cache = h_tmppath("cache");
	const char *prog = stripped_leak(dir, h_tmppath("held"));
	char *calls = warm_calls(H_GLIBC, NULL, prog, cache, dir);
	if (!calls)
		return;
	ck_assert_msg(calls_on(calls, "open openat ", prog, true) == 0,
		      "warm, the program's own file opened:\n%s", calls);
	free(calls);
	links_damaged = 0;
	each_file(cache, damage_link);
	ck_assert_int_eq(links_damaged, 1);
	calls = calls_of(H_GLIBC, NULL, prog, cache, dir, 1);
	ck_assert_msg(calls_on(calls, "open openat ", prog, true) == 1,
		      "link record damaged: the names taken without it:\n%s", calls);
	free(calls);
	calls = calls_of(H_GLIBC, NULL, prog, cache, dir, 1);
	ck_assert_msg(calls_on(calls, "open openat ", prog, true) == 0,
		      "no link record appended again: the program's own file opened:\n%s", calls);
	free(calls);
}
END_TEST

/* The dynamic linker's build-ID debug file (its build ID read from its
 * notes in this process's own mapping of it), NULL where there is none
 * (no libc6-dbg). */
static int ldso_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char **out = arg;
	if (!strstr(info->dlpi_name, "ld-linux"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *desc =
				(const unsigned char *)p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && nh->n_descsz > 1 &&
			    memcmp(p + sizeof *nh, "GNU", 4) == 0) {
				char hex[2 * 64 + 1];
				for (unsigned k = 0; k < nh->n_descsz && k < 64; k++)
					sprintf(hex + 2 * k, "%02x", desc[k]);
				*out = h_env("/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
				return 1;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* A process that could not open a build-ID debug file that is there
 * (stat finds it; the open fails: EACCES where a seccomp filter or
 * Landlock lets stat through, ENFILE, an address-space limit) names that
 * object's static functions "???" (the dynamic linker's allocate_dtv,
 * call_init: its own file has no symbol table), and kept those names
 * under the key of an object whose debug file is there: every later
 * process took them, and the shipped entries that name those frames
 * missed (test_valgrind's running_threads_dtvs_as_valgrinds under
 * tcmalloc, libstdc++'s pool "still reachable", failed so in every run
 * after such a process that shared its cache).  Here the open of ld.so's
 * debug file fails under strace's fault injection in one run; the next
 * run, warm, must pass as a cold one does (plain_dtv_running: the
 * running threads' DTVs the shipped entries take).  Main at aabb987:
 * exit 23, "1 region failed", under each allocator. */
START_TEST(unopened_debug_file_not_kept)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *dbg = NULL;
	dl_iterate_phdr(ldso_note, &dbg);
	if (!dbg || access(dbg, R_OK) != 0 || access(STRACE, X_OK) != 0 || !h_can_ptrace()) {
		printf("note: no debug file of the dynamic linker, no %s or no ptrace; skipping\n",
		       STRACE);
		return;
	}
	const char *cache = h_tmppath(h_env("cache-unopened-%d", _i));
	const char *prog = h_prog("plain_dtv_running");
	const char *const inject[] = {
		STRACE, "-f", "-qq", "-o", "/dev/null", "-P", dbg, "-e", "trace=openat", "-e",
		"inject=openat:error=EACCES", "-E",
		h_env("LD_PRELOAD=%s%s%s", h_lib(), so ? " " : "", so ? so : ""), "-E",
		h_env("MEMCHECK_CACHE=%s", cache), "--", prog, NULL
	};
	struct h_run r;
	ck_assert_msg(h_run(&r, inject, NULL, 0, NULL) == 0, "cannot start %s", STRACE);
	ck_assert_msg(strstr(r.err, "possibly lost"),
		      "%s: the debug file's open not refused (its DTVs taken):\n%s",
		      h_allocator_name(_i), r.err);
	h_run_free(&r);
	const char *const argv[] = { prog, NULL };
	const char *const env[] = { h_env("MEMCHECK_CACHE=%s", cache), NULL };
	ck_assert_int_eq(h_run(&r, argv, env, H_PRELOAD | H_EXITCODE, so), 0);
	ck_assert_msg(r.exit_code == 0 && !strstr(r.err, "possibly lost"),
		      "%s: after a process that could not open %s: %s:\n%s", h_allocator_name(_i),
		      dbg, h_status(&r), r.err);
	h_run_free(&r);
}
END_TEST

/* each_file's callbacks: a file removed; whether a file holds the
 * bytes of name_sought (counted in name_found) */
static const char *name_sought;
static int name_found;

static void drop_file(const char *path)
{
	ck_assert(unlink(path) == 0);
}

static void find_name(const char *path)
{
	size_t len;
	unsigned char *s = slurp(path, &len);
	name_found += memmem(s, len, name_sought, strlen(name_sought)) != NULL;
	free(s);
}

/* How many of the cache's files (not its suppressions') hold name */
static int files_naming(const char *cache, const char *name)
{
	name_sought = name;
	name_found = 0;
	each_file(cache, find_name);
	return name_found;
}

/* bin (with arg, if not NULL) run with supp and cache, its text report
 * the default one (a JSON report names every frame of its peak's sites,
 * kept_fn's too): kept_fn's block suppressed, other_fn's lost where
 * other says. */
static void run_partial(const char *bin, const char *arg, const char *supp, const char *cache,
			bool other)
{
	struct h_res x;
	H_EXEC(&x, .prog = bin, .args = arg ? H_LIST(arg) : NULL, .flags = H_PRELOAD,
	       .no_report = true, .text = "summary",
	       .env = H_LIST(h_env("MEMCHECK_CACHE=%s", cache),
			     h_env("MEMCHECK_SUPPRESSIONS=%s", supp), "MEMCHECK_EXITCODE=0"));
	h_expect_exit(&x, 0);
	const char *err = x.r.err ? x.r.err : "";
	if (other)
		ck_assert_msg(strstr(err, "40 bytes in 1 blocks are definitely lost") &&
			      strstr(err, "used_suppression: 1 by-kept") &&
			      strstr(err, "suppressed: 24 bytes in 1 blocks"),
			      "%s: not kept_fn's block suppressed and other_fn's lost:\n%s",
			      x.label, err);
	else
		ck_assert_msg(strstr(err, "no leaks"), "%s: a leak:\n%s", x.label, err);
	h_res_free(&x);
}

/* A process one of whose records no process matched before matches
 * that one, and names the frames its matching and its report need, not
 * those of the records kept verdicts suppress (supp_region.c): with the
 * cache's names gone (its suppressions' file and verdicts kept), a
 * process that leaks other_fn's block beside kept_fn's writes other_fn's
 * names back and not kept_fn's, which it named before to no end.  The
 * reports are the same, then warm too. */
START_TEST(kept_verdicts_not_named)
{
	const char *dir = h_tmppath("partial"), *cache = h_tmppath("cache");
	mkdir(dir, 0700);
	const char *bin = compile(
		dir, "partial",
		"#include <stdlib.h>\n"
		"void *volatile p, *volatile q;\n"
		"__attribute__((noinline)) void kept_fn(void) { p = malloc(24); p = 0; }\n"
		"__attribute__((noinline)) void other_fn(void) { q = malloc(40); q = 0; }\n"
		"int main(int argc, char **argv)\n"
		"{ (void)argv; kept_fn(); if (argc > 1) other_fn(); return 0; }\n");
	const char *supp = h_env("%s/kept.supp", dir);
	FILE *f = fopen(supp, "w");
	ck_assert(f);
	/* a wildcard: the files' debug-string answers then hold "kept_f" */
	fprintf(f, "{\n   by-kept\n   Memcheck:Leak\n   ...\n   fun:kept_f?\n   ...\n}\n");
	fclose(f);
	run_partial(bin, NULL, supp, cache, false);
	ck_assert_msg(files_naming(cache, "kept_fn") > 0, "the first process kept no name of "
		      "kept_fn");
	each_file(cache, drop_file);
	run_partial(bin, "1", supp, cache, true);
	ck_assert_msg(files_naming(cache, "other_fn") > 0, "other_fn's names not kept");
	ck_assert_msg(files_naming(cache, "kept_fn") == 0,
		      "kept_fn's frames named, though a kept verdict suppressed its record");
	run_partial(bin, "1", supp, cache, true);
	run_partial(bin, NULL, supp, cache, false);
}
END_TEST

/* A stripped program the system installed (/bin/date, measured): its
 * names are kept under its quick key (no DWARF of its own: no file of
 * its build ID's), which a warm process asks first (symkeys.c's
 * key_file_first): it opens no cache file that is not there, where it
 * opened its build ID's first, and failed, at every exit. */
START_TEST(installed_program_names_first)
{
	const char *cache = h_tmppath("cache");
	const char *const prog[] = { "/bin/date", "-u", "-d", "@0", NULL };
	const char *const sets[] = { "MEMCHECK_PROGRAMS=*", NULL };
	char *calls = NULL;
	for (int r = 0; r < 3; r++) {
		struct h_run x;
		free(calls);
		calls = traced_calls(prog, NULL, cache, sets, cache, &x);
		if (!calls)
			return;
		ck_assert_msg(x.exit_code == 0 && strstr(x.err, "definitely lost"),
			      "/bin/date: %s\n%s", h_status(&x), x.err);
		h_run_free(&x);
	}
	const char *sub = subdir(cache);
	int files = 0;
	for (const char *l = calls; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		const char *path = h_env("%.*s", (int)len, l);
		const char *sp = strchr(path, ' ');
		if (sp && strncmp(path, "open", 4) == 0 && strncmp(sp + 1, sub, strlen(sub)) == 0 &&
		    sp[1 + strlen(sub)] == '/') {
			files++;
			ck_assert_msg(access(sp + 1, F_OK) == 0,
				      "warm, %s opened, which is not there:\n%s", sp + 1, calls);
		}
		l += len + (eol != NULL);
	}
	ck_assert_msg(files >= 2, "warm, %d cache files opened (want the suppressions' and "
		      "names'):\n%s", files, calls);
	free(calls);
}
END_TEST

/* The cache's suppression files (supp-*) in dir: the set's (no '-'
 * after supp-HASH) size into *set, how many programs' verdict files
 * (supp-HASH-PROG.v) the return. */
static int supp_files(const char *dir, off_t *set)
{
	const char *sub = subdir(dir);
	DIR *d = opendir(sub);
	ck_assert(d);
	int n = 0;
	*set = -1;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "supp-", 5) != 0 || strstr(e->d_name, ".tmp."))
			continue;
		struct stat st;
		ck_assert(stat(h_env("%s/%s", sub, e->d_name), &st) == 0);
		if (strchr(e->d_name + 5, '-'))
			n += strlen(e->d_name) > 2 && !strcmp(e->d_name + strlen(e->d_name) - 2, ".v");
		else
			*set = st.st_size;
	}
	closedir(d);
	return n;
}

/* A suite of distinct leaking programs (each its own build ID) sharing
 * one cache: each program's verdicts in a file of its own, the set's
 * file as the first left it.  They were appended to the set's file,
 * which every failing process read whole: at the 45th of bench's suite
 * copies +64.5 K instructions at exit, past ~56 no verdict kept. */
START_TEST(verdicts_a_file_a_program)
{
	const char *dir = h_tmppath("programs"), *cache = h_tmppath("cache");
	mkdir(dir, 0700);
	enum { PROGRAMS = 5 };
	off_t first = -1, set;
	char *t;
	for (int p = 0; p < PROGRAMS; p++) {
		const char *bin = compile(dir, h_env("leak%d", p),
					  h_env("#include <stdlib.h>\n%.*svoid *volatile p;\n"
						"int main(void) { p = malloc(8); p = 0; return 0; }\n",
						p, "\n\n\n\n\n"));
		for (int r = 0; r < 2; r++) {
			run(H_GLIBC, bin, NULL, cache, NULL, &t, NULL, NULL);
			ck_assert_msg(strstr(t, "definitely lost"), "program %d, run %d:\n%s", p, r, t);
			free(t);
		}
		int n = supp_files(cache, &set);
		if (p == 0)
			first = set;
		ck_assert_msg(set > 0 && set == first,
			      "after program %d the set's file is %lld bytes, after the first %lld",
			      p, (long long)set, (long long)first);
		ck_assert_msg(n == p + 1, "after program %d: %d programs' verdict files", p, n);
	}
}
END_TEST

/* A test that points HOME at a directory of its own (popt's testit.sh
 * at its build directory, git's test suite at its trash directory) and
 * then lists or compares it finds no .cache that memcheck made there: the
 * default cache, $HOME/.cache/memcheck, is made only where $HOME/.cache
 * exists or HOME is the user's own home (/etc/passwd).  The frames are
 * named from the debug information instead, the report the same; with
 * .cache there, the cache is used.  Under each allocator, MEMCHECK_CACHE
 * and XDG_CACHE_HOME unset (env -u: the harness sets the former). */
START_TEST(home_of_a_test_left_alone)
{
	const char *so;
	if (!h_allocator(_i, &so))
		return;
	const char *home = h_tmppath(h_env("home%d", _i)), *dot = h_env("%s/.cache", home);
	ck_assert(mkdir(home, 0700) == 0);
	const char *env[] = { "MEMCHECK_TEXT=full", NULL };
	char *text[2];
	for (int made = 0; made < 2; made++) {
		struct h_run r;
		H_RUN(&r, H_PRELOAD, so, env, "/usr/bin/env", "-u", "MEMCHECK_CACHE", "-u",
		      "XDG_CACHE_HOME", h_env("HOME=%s", home), h_prog("plain_leak_inlined"));
		text[made] = normal(r.err);
		ck_assert_msg(strstr(text[made], "definitely lost"), "%s, .cache %s: %s\n%s",
			      h_allocator_name(_i), made ? "there" : "absent", h_status(&r), r.err);
		h_run_free(&r);
		struct stat st;
		if (!made) {
			ck_assert_msg(stat(dot, &st) != 0, "%s: memcheck made %s",
				      h_allocator_name(_i), dot);
			ck_assert(mkdir(dot, 0700) == 0);
		} else {
			subdir(h_env("%s/memcheck", dot));
		}
	}
	ck_assert_msg(strcmp(text[0], text[1]) == 0, "%s: without a cache\n%s\n---\nwith\n%s",
		      h_allocator_name(_i), text[0], text[1]);
	free(text[0]);
	free(text[1]);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("symcache", 300);
	tcase_add_loop_test(tc, same_reports, 0, H_NALLOCATORS);
	tcase_add_test(tc, damaged_files);
	tcase_add_test(tc, rebuilt_module);
	tcase_add_test(tc, debug_file_appears);
	tcase_add_test(tc, name_answers_kept);
	tcase_add_test(tc, verdicts_follow_names);
	tcase_add_loop_test(tc, dir_looked_at_once, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, warm_opens_only_files_there, 0, H_NALLOCATORS);
	tcase_add_loop_test(tc, link_places_looked_at_once, 0, H_NALLOCATORS);
	tcase_add_test(tc, link_record_damaged);
	tcase_add_loop_test(tc, unopened_debug_file_not_kept, 0, H_NALLOCATORS);
	tcase_add_test(tc, kept_verdicts_not_named);
	tcase_add_test(tc, installed_program_names_first);
	tcase_add_test(tc, verdicts_a_file_a_program);
	tcase_add_loop_test(tc, home_of_a_test_left_alone, 0, H_NALLOCATORS);
	return h_run_suite(NULL);
}
