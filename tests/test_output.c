/*
 * test_output.c - where memcheck's text and records go, and that they
 * get there whole (issue 14, items 8 and 9): the text goes to the
 * standard error the process started with, not to a file the program
 * put at descriptor 2, and is still shown after the program closed it
 * (coreutils' expr, checked against valgrind); a report file that cannot
 * take a record says so, a FIFO nobody reads never holds up the
 * program's exit, records far over PIPE_BUF from many processes arrive
 * whole through a FIFO, and a pipe whose reader is gone does not kill
 * the program with SIGPIPE, and a symlink another user planted in a
 * shared directory is not followed (item 14).  Names and values in the
 * text are escaped: none makes a line, an escape sequence or Latin-1
 * (item 11; tests/prog/plain_stderr, plain_bigrecords, plain_errors,
 * regions).
 *
 * A run judged alone is a row; a setup makes what it needs first (a
 * FIFO, a planted symlink, a umask) and keeps the paths for the
 * callback.  Two stay tests: the FIFO read by a thread of the test while
 * the run writes to it (H_EXEC), and the pipe whose reader is gone
 * before the program starts, which h_run cannot give.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define EXPR "/usr/bin/expr"

/* Issue 14, item 8: expr closes standard error in an exit handler; the
 * report was lost to EBADF.  Its leaks are valgrind's: 24 bytes
 * definitely lost and 16 indirectly, under glibc. */
H_CHECK(leaks_as_valgrind_has_them)
{
	const char *vg = h_valgrind_path();
	if (x->alloc != H_GLIBC || !vg)
		return;
	struct h_res v;
	H_EXEC(&v, .prog = vg, .args = H_LIST("--leak-check=full", EXPR, "1", "+", "1"),
	       .no_report = true, .text = "");
	struct h_vg_leaks l;
	ck_assert_msg(h_valgrind_leaks(v.r.err, &l, 1) == 1,
		      "no leak summary in valgrind's output:\n%s", v.r.err);
	H_EXPECT_COUNT(rec, "definitely_lost", "bytes", l.bytes[HVG_DEF]);
	H_EXPECT_COUNT(rec, "indirectly_lost", "bytes", l.bytes[HVG_IND]);
	h_res_free(&v);
}

/* Issue 14, item 8: a program that opens a data file at descriptor 2
 * got memcheck's whole report appended to it. */
H_CHECK(data_file_its_own)
{
	char *got = h_read_file(x->file, NULL);
	ck_assert_msg(got && strcmp(got, "data\n") == 0,
		      "%s: the program's file holds more than its own line:\n%s", x->label,
		      got ? got : "(unreadable)");
	free(got);
}

/* The paths the row's setup made, for its callback. */
static const char *made[3];

/* Issue 14, item 9: the program hung at exit in open(2). */
H_SETUP(report_to_fifo)
{
	static const char *env[2];
	made[0] = h_tmppath("fifo");
	ck_assert_int_eq(mkfifo(made[0], 0600), 0);
	env[0] = h_env("MEMCHECK_REPORT=%s", made[0]);
	run->env = env;
	return true;
}

/* Reads a FIFO until told to stop and it is empty. */
struct reader {
	int fd;
	volatile int stop;
	char *buf;
	size_t len, cap;
};

static void *read_fifo(void *arg)
{
	struct reader *rd = arg;
	for (;;) {
		struct pollfd p = { rd->fd, POLLIN, 0 };
		int n = poll(&p, 1, 100);
		if (n == 0 && rd->stop)
			break;
		if (n <= 0)
			continue;
		if (rd->len + 65536 > rd->cap) {
			rd->cap = rd->cap * 2 + 65536;
			rd->buf = realloc(rd->buf, rd->cap + 1);
		}
		ssize_t got = read(rd->fd, rd->buf + rd->len, 65536);
		if (got > 0)
			rd->len += (size_t)got;
	}
	rd->buf[rd->len] = 0;
	return NULL;
}

/* The reader stopped once the FIFO is empty; what it read, in a file
 * (its path). */
static const char *reader_end(struct reader *rd, pthread_t t)
{
	rd->stop = 1;
	pthread_join(t, NULL);
	close(rd->fd);
	const char *path = h_tmppath("records.jsonl");
	FILE *f = fopen(path, "w");
	fwrite(rd->buf, 1, rd->len, f);
	fclose(f);
	return path;
}

/* Issue 14, item 9: records over PIPE_BUF from processes that end at
 * once interleaved in a FIFO (2-4 invalid lines of 30-60).  Nine
 * processes, each record listing 256 leaks. */
START_TEST(test_big_records_through_fifo_stay_whole)
{
	const char *fifo = h_tmppath("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* Open for reading and writing: a reader at once, and no end of
	 * file between one writer and the next. */
	struct reader rd = { open(fifo, O_RDWR), 0, malloc(65537), 0, 65536 };
	ck_assert_msg(rd.fd >= 0, "open %s: %s", fifo, strerror(errno));
	pthread_t t;
	pthread_create(&t, NULL, read_fifo, &rd);
	struct h_res x;
	H_EXEC(&x, .prog = "plain_bigrecords", .args = H_LIST("8"), .flags = H_PRELOAD,
	       .no_report = true,
	       .env = H_LIST(h_env("MEMCHECK_REPORT=%s", fifo), "MEMCHECK_MAX_LEAKS=256"));
	const char *path = reader_end(&rd, t);
	h_expect_exit(&x, 0);
	struct h_report rep;
	H_LOAD(&rep, path);
	ck_assert_msg(rep.n == 9, "%zu records in %zu bytes, expected 9", rep.n, rd.len);
	for (size_t i = 0; i < rep.n; i++)
		ck_assert_msg(h_nleaks(rep.rec[i]) == 256, "record %zu lists %zu leaks, expected 256",
			      i, h_nleaks(rep.rec[i]));
	h_report_free(&rep);
	free(rd.buf);
	h_res_free(&x);
}
END_TEST

/* Another writer's lines into the same FIFO, each one write(2) no
 * longer than PIPE_BUF, until told to stop: a collector's own records,
 * a test driver's, which take no flock. */
struct other {
	int fd;
	volatile int stop;
	int written;
};

static const char other_line[] = "{\"name\":\"other\",\"pid\":1,\"program\":\"p\","
				 "\"allocator\":\"glibc\",\"verdict\":\"pass\"}\n";

static void *write_others(void *arg)
{
	struct other *o = arg;
	while (!o->stop) {
		if (write(o->fd, other_line, sizeof other_line - 1) == (ssize_t)sizeof other_line - 1)
			o->written++;
		usleep(1000);
	}
	return NULL;
}

/* harden43: a record larger than a pipe can be made to hold (1 MiB:
 * plain_bigrecords' 1024 leaks of 11 frames are 4 MiB) cannot go whole.
 * On main it went in PIPE_BUF pieces, and another writer's lines, which
 * take no flock, landed inside it: its line, and theirs, unreadable.
 * Now it goes as parts, each a line of at most PIPE_BUF bytes, glued
 * back by the readers (memcheck gate here): every record read, the
 * other writer's too. */
START_TEST(test_huge_records_through_fifo_in_parts)
{
	if (!h_allocator(_i, NULL))
		return;
	const char *fifo = h_tmppath("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	struct reader rd = { open(fifo, O_RDWR), 0, malloc(65537), 0, 65536 };
	ck_assert_msg(rd.fd >= 0, "open %s: %s", fifo, strerror(errno));
	struct other o = { open(fifo, O_WRONLY), 0, 0 };
	ck_assert_int_ge(o.fd, 0);
	pthread_t t, w;
	pthread_create(&t, NULL, read_fifo, &rd);
	pthread_create(&w, NULL, write_others, &o);
	struct h_res x;
	H_EXEC(&x, .prog = "plain_bigrecords", .args = H_LIST("1", "1024"), .alloc = _i,
	       .flags = H_PRELOAD, .no_report = true,
	       .env = H_LIST(h_env("MEMCHECK_REPORT=%s", fifo), "MEMCHECK_MAX_LEAKS=1024"));
	o.stop = 1;
	pthread_join(w, NULL);
	close(o.fd);
	const char *path = reader_end(&rd, t);
	h_expect_exit(&x, 0);
	size_t longest = 0, parts = 0;
	for (char *l = rd.buf, *nl; l < rd.buf + rd.len; l = nl + 1) {
		nl = memchr(l, '\n', (size_t)(rd.buf + rd.len - l));
		ck_assert_msg(nl, "the FIFO's text ends inside a line");
		longest = (size_t)(nl - l) + 1 > longest ? (size_t)(nl - l) + 1 : longest;
		parts += strncmp(l, "{\"part\":", 8) == 0;
	}
	ck_assert_msg(longest <= PIPE_BUF, "a line of %zu bytes, more than PIPE_BUF", longest);
	ck_assert_msg(rd.len > (4u << 20) && parts > 2 * 1024, "%zu bytes, %zu parts", rd.len, parts);
	struct h_res g;
	H_EXEC(&g, .cli = H_LIST("gate", path));
	h_expect_exit(&g, 1); /* the leaks fail the two big records */
	const char *want = h_env("memcheck gate: %d records, 2 failed", 2 + o.written);
	ck_assert_msg(strstr(g.r.out, want), "no '%s' in:\n%s%s", want, g.r.out, g.r.err);
	ck_assert_msg(!strstr(g.r.err, "records.jsonl:"), "%s", g.r.err);
	ck_assert_msg(strstr(g.r.out, "24576 bytes in 1024 blocks definitely lost"),
		      "the big records' leaks: %s", g.r.out);
	h_res_free(&g);
	free(rd.buf);
	h_res_free(&x);
}
END_TEST

/* prog 2>&1 | head -1: memcheck's report at exit met a pipe whose
 * reader was gone, and SIGPIPE killed a program that had exited 0.  Not
 * a row: the program's stderr is a pipe closed before it runs. */
START_TEST(test_stderr_pipe_without_reader_no_sigpipe)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		setenv("LD_PRELOAD", h_lib(), 1);
		setenv("MEMCHECK_TEXT", "full", 1);
		setenv("MEMCHECK_EXITCODE", "0", 1); /* the program's own status */
		signal(SIGPIPE, SIG_DFL);
		execl(h_prog("plain_errors"), "plain_errors", "leak", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(p[0]); /* the reader is gone before memcheck writes */
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "plain_errors leak with standard error a pipe nobody reads: status 0x%x%s",
		      st, WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE ? " (SIGPIPE)" : "");
}
END_TEST

/* Issue 14, item 14: a report named in a sticky, world-writable
 * directory (/tmp) follows a symlink there only if it is the process's
 * own or the directory owner's, as fs.protected_symlinks would, which
 * is off on some machines.  Needs root, to plant a link as nobody:
 * made[0] the shared directory, made[1] the link, made[2] its target. */
static bool shared_dir_with_link(struct h_spec *run, bool planted)
{
	static const char *env[2];
	if (geteuid() != 0) {
		printf("note: not root; skipping the planted-symlink case\n");
		return false;
	}
	made[0] = h_tmppath("shared");
	ck_assert_int_eq(mkdir(made[0], 0777), 0);
	ck_assert_int_eq(chmod(made[0], 01777), 0);
	made[1] = h_env("%s/%s.jsonl", made[0], planted ? "report" : "own");
	made[2] = h_tmppath(planted ? "victim" : "target.jsonl");
	if (planted) {
		FILE *f = fopen(made[2], "w");
		ck_assert_ptr_nonnull(f);
		fputs("precious\n", f);
		fclose(f);
	}
	ck_assert_int_eq(symlink(made[2], made[1]), 0);
	if (planted)
		ck_assert_int_eq(lchown(made[1], 65534, 65534), 0);
	env[0] = h_env("MEMCHECK_REPORT=%s", made[1]);
	run->env = env;
	return true;
}
H_SETUP(planted_link)
{
	return shared_dir_with_link(run, true);
}
H_SETUP(own_link)
{
	return shared_dir_with_link(run, false);
}

H_TEARDOWN(link_removed)
{
	unlink(made[1]);
	rmdir(made[0]);
}

H_CHECK(victim_untouched)
{
	char *got = h_read_file(made[2], NULL);
	ck_assert_msg(got && strcmp(got, "precious\n") == 0, "the planted link was followed:\n%s",
		      got ? got : "(unreadable)");
	free(got);
}

/* The process's own link there is followed. */
H_CHECK(report_through_own_link)
{
	struct h_report rep;
	H_LOAD(&rep, made[2]);
	ck_assert_msg(rep.n == 1 && x->r.err_len == 0, "own link: %zu records; stderr:\n%s",
		      rep.n, x->r.err);
	h_report_free(&rep);
}

/* Every line of memcheck's text on stderr is one of its own: starts
 * with ==PID== or memcheck[PID], holds no control byte but its newline
 * and only UTF-8 without C1 controls. */
static void expect_clean_text(const char *err, pid_t pid)
{
	char a[32], b[32];
	snprintf(a, sizeof a, "==%d==", (int)pid);
	snprintf(b, sizeof b, "memcheck[%d]", (int)pid);
	for (const char *line = err; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		ck_assert_msg(strncmp(line, a, strlen(a)) == 0 || strncmp(line, b, strlen(b)) == 0,
			      "a line that is not memcheck's: \"%.*s\"", (int)len, line);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)line[i];
			ck_assert_msg(c >= 0x20 && c != 0x7f, "byte 0x%02x in \"%.*s\"", c, (int)len,
				      line);
			ck_assert_msg(!(c == 0xc2 && i + 1 < len && (unsigned char)line[i + 1] < 0xa0),
				      "a C1 control in \"%.*s\"", (int)len, line);
			ck_assert_msg(c < 0x80 || (c >= 0xc2 && c <= 0xf4) ||
				      (c >= 0x80 && c < 0xc0 && i > 0),
				      "byte 0x%02x is not UTF-8 in \"%.*s\"", c, (int)len, line);
		}
		line += len + (nl != NULL);
	}
}

/* Issue 14, item 11: a region name with a newline forged a line of the
 * report ("==1234== PASS"), its escape sequence reached the terminal and
 * its Latin-1 byte came out raw.  Under each allocator. */
H_CHECK(shown_escaped)
{
	expect_clean_text(x->r.err, x->r.pid);
	const char *shown = "x\\n==1234== PASS \\x1b[31mred caf\\xe9 \\u009b2J";
	ck_assert_msg(h_count_lines(x->r.err, shown) >= 2, "%s: the name is not shown escaped "
		      "(%s):\n%s", x->label, shown, x->r.err);
}

/* The same for memcheck's own messages, which echo the values they
 * refuse. */
H_CHECK(value_shown_escaped)
{
	expect_clean_text(x->r.err, x->r.pid);
	ck_assert_msg(strstr(x->r.err, "MEMCHECK_TEXT=none\\n==1== PASS \\x1b[2J\\xff: expected one of"),
		      "%s: the value is not shown escaped:\n%s", x->label, x->r.err);
}

/* Issue 14, item 13: the log was created 0666 before the umask, the
 * report 0644.  With a umask of 0 both are 0644: made[0] the log,
 * made[1] the report. */
H_SETUP(log_and_report_under_umask_0)
{
	static const char *env[3];
	made[0] = h_tmppath("log");
	made[1] = h_tmppath("report.jsonl");
	env[0] = h_env("MEMCHECK_LOG=%s", made[0]);
	env[1] = h_env("MEMCHECK_REPORT=%s", made[1]);
	run->env = env;
	umask(0);
	return true;
}

H_CHECK(both_0644)
{
	struct stat a, b;
	ck_assert_msg(stat(made[0], &a) == 0 && stat(made[1], &b) == 0, "no log or no report");
	ck_assert_msg((a.st_mode & 07777) == 0644 && (b.st_mode & 07777) == 0644,
		      "log mode %o, report mode %o; expected 644", a.st_mode & 07777,
		      b.st_mode & 07777);
}

/* The program's stdout and memcheck's text in one file (a script's
 * `prog > out 2>&1`): the program's buffered output first, whole, as
 * valgrind has it; it came after memcheck's text, or split by it. */
H_SETUP(stdout_and_stderr_one_file)
{
	static const char *args[5];
	made[0] = h_tmppath("merged");
	args[0] = "-c";
	args[1] = "exec \"$0\" > \"$1\" 2>&1";
	args[2] = h_prog("plain_stdout_merged");
	args[3] = made[0];
	args[4] = NULL;
	run->args = args;
	return true;
}

H_CHECK(program_output_first)
{
	char *got = h_read_file(made[0], NULL);
	static const char first[] = "first line\npartial";
	ck_assert_msg(got && strncmp(got, first, sizeof first - 1) == 0 &&
			      strstr(got + sizeof first - 1, "definitely lost"),
		      "%s: the file does not begin with the program's output, memcheck's "
		      "text after it:\n%s",
		      x->label, got ? got : "(unreadable)");
	free(got);
	unlink(made[0]);
}

/* MEMCHECK_LOG=FILE, a fresh path */
static const char *log_path;
static bool log_to_file(struct h_spec *run, const struct h_case *c)
{
	(void)c;
	static const char *env[2];
	log_path = h_tmppath("text.log");
	env[0] = h_env("MEMCHECK_LOG=%s", log_path);
	run->env = env;
	return true;
}

H_CHECK(line_in_log)
{
	char *got = h_read_file(log_path, NULL);
	ck_assert_msg(got && strstr(got, "memcheck: \"process\" in ") && strstr(got, "no leaks ("),
		      "%s: no summary line in MEMCHECK_LOG's file:\n%s", x->label,
		      got ? got : "(unreadable)");
	free(got);
	unlink(log_path);
}

/* plain_errors leak preloaded, its report sent where given (no report
 * of the harness's) */
#define LEAK_TO(...) .allocators = H_ONLY(H_GLIBC),                             \
	.run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD, \
		 .no_report = true, ##__VA_ARGS__ }
/* A report target that cannot be written to: one line, the program's
 * result unchanged, and no wait. */
#define ONE_COMPLAINT(said) .err_lines = { { "MEMCHECK_REPORT=", 1 } }, .err = H_LIST(said)

static const struct h_case cases[] = {
	/* An installed program is measured only when named; its own exit
	 * status, not the one a leaking region gives. */
	{ "the report shown after the program closed stderr",
	  .run = { .prog = EXPR, .args = H_LIST("1", "+", "1"), .flags = H_PRELOAD, .text = "full",
		   .env = H_LIST("MEMCHECK_PROGRAMS=*", "MEMCHECK_EXITCODE=0") },
	  .stdout_is = "2\n", .err = H_LIST("region \"process\" in", "LEAK SUMMARY"),
	  .record = "process", .check = leaks_as_valgrind_has_them },
	/* Issue 14, item 11: a region name with a newline forged a line of
	 * the report ("==1234== PASS"), its escape sequence reached the
	 * terminal and its Latin-1 byte came out raw.  Under each allocator. */
	{ "the region name escaped in the text",
	  .run = { .prog = "regions", .args = H_LIST("name_forged"), .flags = H_PRELOAD,
		   .text = "full", .no_report = true },
	  .check = shown_escaped },
	{ "a data file at descriptor 2",
	  .run = { .prog = "plain_stderr", .args = H_LIST(H_FILE), .flags = H_PRELOAD,
		   .text = "full", .no_report = true },
	  .file = "", .err = H_LIST("100 bytes in 1 blocks are definitely lost"),
	  .check = data_file_its_own },
	{ "a report to /dev/full", LEAK_TO(.env = H_LIST("MEMCHECK_REPORT=/dev/full")),
	  ONE_COMPLAINT("cannot write to MEMCHECK_REPORT=/dev/full: No space left on device") },
	{ "a report to a FIFO nobody reads", LEAK_TO(), .setup = report_to_fifo,
	  ONE_COMPLAINT("a FIFO no process has open for reading") },
	{ "a report through a symlink planted in a shared directory", LEAK_TO(),
	  .setup = planted_link, .teardown = link_removed,
	  ONE_COMPLAINT("a symlink in a shared directory that belongs to another user"),
	  .check = victim_untouched },
	{ "a report through its own symlink in a shared directory", LEAK_TO(),
	  .setup = own_link, .teardown = link_removed, .check = report_through_own_link },
	{ "a bad value escaped in the message", .allocators = H_ONLY(H_GLIBC),
	  .run = { .prog = "plain_errors", .args = H_LIST("double"), .flags = H_PRELOAD,
		   .no_report = true, .text = "",
		   .env = H_LIST("MEMCHECK_TEXT=none\n==1== PASS \x1b[2J\xff") },
	  .check = value_shown_escaped },
	{ "files created 0644", LEAK_TO(.text = "full"), .setup = log_and_report_under_umask_0,
	  .check = both_0644 },
	/* MEMCHECK_TEXT unset (auto): a passing process's line only in
	 * memcheck's own file; a script comparing its programs' stderr
	 * (pcre2's RunGrepTest) or their terminal (jq's shtest, through
	 * script(1)) found it in every output.  A failing one everywhere. */
	{ "a passing process says nothing into a redirected stderr",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, .text = "", .no_report = true },
	  .no_err = H_LIST("memcheck") },
	{ "a passing process says nothing on its terminal",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD | H_TERMINAL, .text = "",
		   .no_report = true },
	  .stdout_is = "" },
	{ "a passing process's line in MEMCHECK_LOG's file",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, .text = "", .no_report = true },
	  .setup = log_to_file, .no_err = H_LIST("memcheck"), .check = line_in_log },
	{ "a failing process's text in a redirected stderr",
	  .run = { .prog = "plain_errors", .args = H_LIST("leak"), .flags = H_PRELOAD, .text = "",
		   .no_report = true },
	  .err = H_LIST("are definitely lost in loss record", "FAIL: ") },
	{ "MEMCHECK_TEXT=summary writes the line into a redirected stderr",
	  .run = { .prog = "plain_clean", .flags = H_PRELOAD, .text = "summary", .no_report = true },
	  .err = H_LIST("memcheck: \"process\" in ", "no leaks (") },
	{ "the program's stdout before the text in one file",
	  .run = { .prog = "/bin/sh", .flags = H_PRELOAD, .text = "full", .no_report = true },
	  .exit = H_EXIT_ANY, .setup = stdout_and_stderr_one_file, .check = program_output_first },
};

int main(void)
{
	TCase *tc = h_tcase("output", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_test(tc, test_big_records_through_fifo_stay_whole);
	tcase_add_loop_test(tc, test_huge_records_through_fifo_in_parts, 0, H_NALLOCATORS);
	tcase_add_test(tc, test_stderr_pipe_without_reader_no_sigpipe);
	return h_run_suite(NULL);
}
