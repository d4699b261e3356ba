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
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
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
START_TEST(test_report_not_in_file_program_put_at_fd2)
{
	if (!h_allocator(_i, NULL))
		return;
	const char *data = h_tmppath("data");
	struct h_res x;
	H_EXEC(&x, .prog = "plain_stderr", .args = H_LIST(data), .alloc = _i, .flags = H_PRELOAD,
	       .text = "full", .no_report = true);
	h_expect_exit(&x, 0);
	char *got = h_read_file(data, NULL);
	ck_assert_msg(got && strcmp(got, "data\n") == 0,
		      "%s: the program's file holds more than its own line:\n%s", x.label,
		      got ? got : "(unreadable)");
	ck_assert_msg(strstr(x.r.err, "100 bytes in 1 blocks are definitely lost"),
		      "%s: the report is not on the original standard error:\n%s", x.label, x.r.err);
	free(got);
	h_res_free(&x);
}
END_TEST

/* A report target that cannot be written to: one line, the program's
 * result unchanged, and no wait. */
static void expect_one_complaint(const char *target, const char *said)
{
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", target), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak");
	ck_assert_msg(!r.timed_out && r.exit_code == 0, "MEMCHECK_REPORT=%s: %s", target,
		      h_status(&r));
	ck_assert_msg(h_count_lines(r.err, "MEMCHECK_REPORT=") == 1 && strstr(r.err, said),
		      "MEMCHECK_REPORT=%s: expected one line saying \"%s\":\n%s", target, said,
		      r.err);
	h_run_free(&r);
}

START_TEST(test_report_to_dev_full_says_so)
{
	expect_one_complaint("/dev/full", "cannot write to MEMCHECK_REPORT=/dev/full: "
			     "No space left on device");
}
END_TEST

/* Issue 14, item 9: the program hung at exit in open(2). */
START_TEST(test_report_to_fifo_without_reader_does_not_wait)
{
	const char *fifo = h_tmppath("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	expect_one_complaint(fifo, "a FIFO no process has open for reading");
}
END_TEST

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
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", fifo), "MEMCHECK_TEXT=none",
			      "MEMCHECK_MAX_LEAKS=256", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_bigrecords"), "8");
	rd.stop = 1;
	pthread_join(t, NULL);
	close(rd.fd);
	ck_assert_msg(r.exit_code == 0, "plain_bigrecords: %s; stderr:\n%s", h_status(&r), r.err);
	const char *path = h_tmppath("records.jsonl");
	FILE *f = fopen(path, "w");
	fwrite(rd.buf, 1, rd.len, f);
	fclose(f);
	struct h_report rep;
	H_LOAD(&rep, path);
	ck_assert_msg(rep.n == 9, "%zu records in %zu bytes, expected 9", rep.n, rd.len);
	for (size_t i = 0; i < rep.n; i++)
		ck_assert_msg(h_nleaks(rep.rec[i]) == 256, "record %zu lists %zu leaks, expected 256",
			      i, h_nleaks(rep.rec[i]));
	h_report_free(&rep);
	free(rd.buf);
	h_run_free(&r);
}
END_TEST

/* prog 2>&1 | head -1: memcheck's report at exit met a pipe whose
 * reader was gone, and SIGPIPE killed a program that had exited 0. */
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
 * is off on some machines.  Needs root, to plant a link as nobody. */
START_TEST(test_report_symlink_planted_in_shared_dir_not_followed)
{
	if (geteuid() != 0) {
		printf("note: not root; skipping the planted-symlink case\n");
		return;
	}
	const char *dir = h_tmppath("shared");
	const char *victim = h_tmppath("victim");
	ck_assert_int_eq(mkdir(dir, 0777), 0);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	FILE *f = fopen(victim, "w");
	fputs("precious\n", f);
	fclose(f);
	const char *planted = h_env("%s/report.jsonl", dir);
	ck_assert_int_eq(symlink(victim, planted), 0);
	ck_assert_int_eq(lchown(planted, 65534, 65534), 0);
	expect_one_complaint(planted, "a symlink in a shared directory that belongs to another "
			     "user");
	char *got = h_read_file(victim, NULL);
	ck_assert_msg(got && strcmp(got, "precious\n") == 0, "the planted link was followed:\n%s",
		      got ? got : "(unreadable)");
	free(got);
	/* The process's own link there is followed. */
	const char *own = h_env("%s/own.jsonl", dir);
	const char *target = h_tmppath("target.jsonl");
	ck_assert_int_eq(symlink(target, own), 0);
	const char *env[] = { h_env("MEMCHECK_REPORT=%s", own), "MEMCHECK_TEXT=none", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak");
	struct h_report rep;
	H_LOAD(&rep, target);
	ck_assert_msg(r.exit_code == 0 && rep.n == 1 && r.err_len == 0,
		      "own link: %s, %zu records; stderr:\n%s", h_status(&r), rep.n, r.err);
	h_report_free(&rep);
	h_run_free(&r);
	unlink(planted);
	unlink(own);
	rmdir(dir);
}
END_TEST

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
};

/* The same for memcheck's own messages, which echo the values they
 * refuse. */
START_TEST(test_bad_option_value_escaped_in_message)
{
	const char *env[] = { "MEMCHECK_TEXT=none\n==1== PASS \x1b[2J\xff", NULL };
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "double");
	ck_assert_msg(r.exit_code == 0, "plain_errors double: %s", h_status(&r));
	expect_clean_text(r.err, r.pid);
	ck_assert_msg(strstr(r.err, "MEMCHECK_TEXT=none\\n==1== PASS \\x1b[2J\\xff: expected one of"),
		      "the value is not shown escaped:\n%s", r.err);
	h_run_free(&r);
}
END_TEST

/* Issue 14, item 13: the log was created 0666 before the umask, the
 * report 0644.  With a umask of 0 both are 0644. */
START_TEST(test_files_created_0644)
{
	const char *log = h_tmppath("log"), *report = h_tmppath("report.jsonl");
	const char *env[] = { h_env("MEMCHECK_LOG=%s", log), h_env("MEMCHECK_REPORT=%s", report),
			      "MEMCHECK_TEXT=full", NULL };
	umask(0);
	struct h_run r;
	H_RUN(&r, H_PRELOAD, NULL, env, h_prog("plain_errors"), "leak");
	ck_assert_msg(r.exit_code == 0, "plain_errors leak: %s", h_status(&r));
	struct stat a, b;
	ck_assert_msg(stat(log, &a) == 0 && stat(report, &b) == 0, "no log or no report");
	ck_assert_msg((a.st_mode & 07777) == 0644 && (b.st_mode & 07777) == 0644,
		      "log mode %o, report mode %o; expected 644", a.st_mode & 07777,
		      b.st_mode & 07777);
	h_run_free(&r);
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("output", 60);
	H_ADD_CASES(tc, cases);
	tcase_add_loop_test(tc, test_report_not_in_file_program_put_at_fd2, 0, H_NALLOCATORS);
	tcase_add_test(tc, test_report_to_dev_full_says_so);
	tcase_add_test(tc, test_report_to_fifo_without_reader_does_not_wait);
	tcase_add_test(tc, test_big_records_through_fifo_stay_whole);
	tcase_add_test(tc, test_stderr_pipe_without_reader_no_sigpipe);
	tcase_add_test(tc, test_report_symlink_planted_in_shared_dir_not_followed);
	tcase_add_test(tc, test_bad_option_value_escaped_in_message);
	tcase_add_test(tc, test_files_created_0644);
	return h_run_suite(NULL);
}
