/*
 * fuzz_records.c - the CLI's report reader under libFuzzer (make fuzz,
 * make fuzz-check; FUZZ_TARGETS=records for this one alone):
 * tools/records.c's recs_read, which memcheck run (its own runs' reports
 * and --baseline-file), compare and gate feed with report files that a
 * process killed as it wrote, a full disk or a hand may have cut short or
 * damaged.  fuzz_report checks one record's parser on one line; this one
 * the reading of whole files, line by line, the cut-record recovery and
 * the messages.  The input is a report file (seeds: fuzz/corpus_records,
 * real reports of tests/prog programs); the target reads it as given,
 * cut short at many places (every byte of an input up to 512 bytes; 8
 * places spread over a longer one, and two its hash picks) and
 * with one byte changed where the hash says.  Besides what ASan and UBSan
 * catch, and libFuzzer's hang and memory limits, it checks that nothing
 * is lost silently:
 *   - every record read comes from the line it says (struct rec's
 *     lineno), which holds it (more than one where damage joined
 *     them) or is the last part of a record in parts, in the order of
 *     the lines; every line that is not blank holds records read, or
 *     is said on stderr as FILE:LINE: (its file and line named), or is
 *     a record's part: one before the last, or the last of a record
 *     read or said (its pid and seq named); and the count of bad lines
 *     recs_read returns is 0 exactly when nothing was said;
 *   - a file cut short reads no record the whole file does not have, in
 *     the same order, and a record cut inside its line (not in the
 *     blanks after it) is said, never dropped quietly;
 *   - read with the probe of hopeless lines (recs_probe_bytes) at a few
 *     bytes, where a line that can hold no record is said at its first
 *     bytes and the rest skipped, the file gives the same records from
 *     the same lines and names the same lines as read whole.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input's file and stderr's, memfds kept for the process. */
static int in_fd = -1, err_fd = -1, saved_err = -1;
static char in_path[64];

static void setup(void)
{
	if (in_fd >= 0)
		return;
	in_fd = memfd_create("report", 0);
	err_fd = memfd_create("stderr", 0);
	saved_err = dup(2);
	if (in_fd < 0 || err_fd < 0 || saved_err < 0)
		abort();
	snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
	/* the sanitizers' reports to the real stderr, not the memfd */
	__sanitizer_set_report_fd((void *)(intptr_t)saved_err);
}

static void put(int fd, const uint8_t *p, size_t n)
{
	/* (stderr's writes go at the shared offset: back to 0) */
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0 || (n && write(fd, p, n) != (ssize_t)n))
		abort();
}

/* What stderr got, NUL-terminated; free it. */
static char *said(void)
{
	off_t n = lseek(err_fd, 0, SEEK_END);
	char *s = malloc((size_t)n + 1);
	if (n < 0 || pread(err_fd, s, (size_t)n, 0) != n)
		abort();
	s[n] = 0;
	return s;
}

static bool blank_line(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

/* A record's part (lib/textout.c's write_parts): 0 where the line is
 * none (its head read as the reader reads it: a key repeated or another
 * between them, as damage leaves them, does not make it no part), 1
 * where it is one but the last, 2 where it is the last; *said: its
 * record (pid and seq) is named in err. */
static int part_line(const uint8_t *p, size_t n, const char *err, bool *said)
{
	struct mc_jv v, part, f;
	uint64_t pid, seq, i, parts;
	if (n < 8 || memcmp(p, "{\"part\":", 8) != 0 || !mc_jv_line((const char *)p, n, &v) ||
	    !mc_jv_get(v, "part", &part) || !mc_jv_get(part, "pid", &f) || !mc_jv_u64(f, &pid) ||
	    !mc_jv_get(part, "seq", &f) || !mc_jv_u64(f, &seq) || !mc_jv_get(part, "i", &f) ||
	    !mc_jv_u64(f, &i) || !mc_jv_get(part, "n", &f) || !mc_jv_u64(f, &parts))
		return 0;
	char said_as[96];
	snprintf(said_as, sizeof said_as, "pid %llu (seq %llu)", (unsigned long long)pid,
		 (unsigned long long)seq);
	*said = strstr(err, said_as) != NULL;
	return i == parts ? 2 : 1;
}

/* Read n bytes of data as a report into rs; the bad count; *err what was
 * said (free it).  Checks the first property above. */
static int read_as_report(const uint8_t *data, size_t n, struct recs *rs, char **err)
{
	put(in_fd, data, n);
	put(err_fd, NULL, 0);
	fflush(stderr);
	if (dup2(err_fd, 2) < 0)
		abort();
	memset(rs, 0, sizeof *rs);
	int bad = recs_read(rs, in_path, false);
	fflush(stderr);
	if (dup2(saved_err, 2) < 0)
		abort();
	*err = said();
	if (bad < 0 || (bad == 0) != (**err == 0))
		abort();                     /* a count that is not what was said */
	/* every record from a line that holds it (a record in parts: its
	 * last part's line), in the order of the lines; every line not
	 * blank: records read from it, or named, or a part whose record is
	 * to come or is said */
	size_t next = 0, lineno = 0;
	char name[96];
	for (size_t at = 0; at < n;) {
		const uint8_t *nl = memchr(data + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : n - at;
		lineno++;
		bool said = false;
		int part = part_line(data + at, len, *err, &said);
		bool read = false;
		for (size_t from = at, rl; next < rs->n && rs->v[next].lineno == (int)lineno;
		     next++, read = true) {
			if (part == 2)
				continue;    /* glued: no line holds it as it is */
			const uint8_t *r = memmem(data + from, at + len - from, rs->v[next].line,
						  rl = strlen(rs->v[next].line));
			if (part || !r)
				abort();     /* a record its line does not hold */
			from = (size_t)(r - data) + rl;
		}
		if (!blank_line(data + at, len) || memchr(data + at, 0, len)) {
			snprintf(name, sizeof name, "%s:%zu:", in_path, lineno);
			bool named = strstr(*err, name) != NULL;
			if (!read && !named && part != 1 && !(part == 2 && said))
				abort();     /* a line lost silently */
		}
		at += len + 1;
	}
	if (next != rs->n)
		abort();                     /* a record from no line, or out of order */
	return bad;
}

/* The input (size bytes) cut after k: its records a prefix of the
 * whole's, and a record line cut inside its text said. */
static void check_cut(const uint8_t *data, size_t size, size_t k, const struct recs *whole)
{
	struct recs rs;
	char *err;
	int bad = read_as_report(data, k, &rs, &err);
	for (size_t i = 0; i < rs.n; i++)
		if (i >= whole->n || strcmp(rs.v[i].line, whole->v[i].line) != 0)
			abort();             /* a record the whole file does not have */
	/* the line the cut falls in: text cut off it (not blanks alone)
	 * while its record was read whole from the whole file */
	size_t start = k, end = k;
	while (start > 0 && data[start - 1] != '\n')
		start--;
	while (end < size && data[end] != '\n')
		end++;
	if (k > start && !blank_line(data + k, end - k)) {
		bool was_record = false;
		for (size_t i = 0; i < whole->n; i++)
			was_record |= strlen(whole->v[i].line) == end - start &&
				      memcmp(whole->v[i].line, data + start, end - start) == 0;
		if (was_record && bad == 0)
			abort();             /* a cut record dropped quietly */
	}
	recs_free(&rs);
	free(err);
}

/* The lines named in err ("PATH:N:" at a line's start), in order. */
static size_t named_lines(const char *err, size_t *v, size_t cap)
{
	size_t n = 0, plen = strlen(in_path);
	for (const char *p = err; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		unsigned long line;
		if (strncmp(p, in_path, plen) == 0 && sscanf(p + plen, ":%lu:", &line) == 1 && n < cap)
			v[n++] = line;
	}
	return n;
}

/* Two reads of one input: the same records from the same lines, the
 * same count of bad lines, the same lines named. */
static void check_same(const struct recs *a, int abad, const char *aerr, const struct recs *b,
		       int bbad, const char *berr)
{
	if (a->n != b->n || abad != bbad)
		abort();
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].lineno != b->v[i].lineno || strcmp(a->v[i].line, b->v[i].line) != 0)
			abort();
	size_t la[64], lb[64];
	size_t na = named_lines(aerr, la, 64), nb = named_lines(berr, lb, 64);
	if (na != nb || memcmp(la, lb, na * sizeof *la) != 0)
		abort();
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	struct recs whole;
	char *err, *whole_err;
	int whole_bad = read_as_report(data, size, &whole, &whole_err);
	if (size) {
		uint64_t h = hash(data, size);
		if (size <= 512) {
			for (size_t k = 0; k < size; k++)
				check_cut(data, size, k, &whole);
		} else {
			for (size_t i = 0; i < 8; i++)
				check_cut(data, size, size * i / 8, &whole);
			check_cut(data, size, h % size, &whole);
			check_cut(data, size, (h >> 32) % size, &whole);
		}
		/* a line that can hold no record said at its first bytes and
		 * skipped (recs_probe_bytes, 64 KiB, set low here): the same
		 * records, and the same lines named, as the line read whole */
		struct recs early;
		char *early_err;
		size_t probe = recs_probe_bytes;
		recs_probe_bytes = 1 + (h >> 40) % 96;
		int early_bad = read_as_report(data, size, &early, &early_err);
		recs_probe_bytes = probe;
		check_same(&whole, whole_bad, whole_err, &early, early_bad, early_err);
		recs_free(&early);
		free(early_err);
		/* one byte changed: read without a crash, every line accounted */
		uint8_t *flipped = malloc(size);
		memcpy(flipped, data, size);
		flipped[(h >> 16) % size] ^= (uint8_t)(1u << (h >> 8) % 8);
		struct recs rs;
		read_as_report(flipped, size, &rs, &err);
		recs_free(&rs);
		free(err);
		free(flipped);
	}
	recs_free(&whole);
	free(whole_err);
	return 0;
}
