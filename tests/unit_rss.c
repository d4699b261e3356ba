/*
 * unit_rss.c - lib/rss.c on its own: touched memory shows in the current
 * RSS, the peak follows it, resetting the peak brings it back down once the
 * memory is returned, and errno survives every call; a thread just
 * joined does not count as running.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "suite.h"

#define MiB (1024 * 1024ull)
#define SIZE (64 * MiB)
/* Under ASan, touching memory also makes its shadow resident: one byte
 * for every eight (seen on some kernels, not others). */
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW (SIZE / 8)
#else
#define SHADOW 0
#endif

/* Reading one byte of every page through volatile keeps the compiler from
 * dropping the memset as a dead store. */
static unsigned long sum_pages(const char *p, size_t size)
{
	const volatile char *v = p;
	unsigned long sum = 0;
	for (size_t i = 0; i < size; i += 4096)
		sum += (unsigned char)v[i];
	return sum;
}

START_TEST(current_follows_touched_memory)
{
	uint64_t before = mc_rss_current();
	ck_assert_uint_gt(before, 0);
	char *p = malloc(SIZE);
	ck_assert_ptr_nonnull(p);
	/* Not zero: malloc+memset(0) may become calloc, which touches nothing. */
	memset(p, 0x5a, SIZE);
	ck_assert_uint_eq(sum_pages(p, SIZE), 0x5aul * (SIZE / 4096));
	uint64_t after = mc_rss_current();
	ck_assert_msg(after >= before + 60 * MiB && after <= before + 70 * MiB + SHADOW,
		      "RSS grew by %.1f MiB", ((double)after - (double)before) / MiB);
	ck_assert_uint_ge(mc_rss_peak(NULL, NULL), after);
	free(p);
}
END_TEST

START_TEST(reset_peak_drops_to_current)
{
	char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	memset(p, 0x5a, SIZE);
	ck_assert_uint_eq(sum_pages(p, SIZE), 0x5aul * (SIZE / 4096));
	uint64_t touched = mc_rss_current();
	ck_assert_uint_ge(mc_rss_peak(NULL, NULL), touched);
	munmap(p, SIZE);

	uint64_t current = mc_rss_current();
	ck_assert_uint_ge(mc_rss_peak(NULL, NULL), current + 60 * MiB);
	ck_assert(mc_rss_reset_peak());
	uint64_t peak = mc_rss_peak(NULL, NULL);
	current = mc_rss_current();
	ck_assert_msg(peak + 4 * MiB >= current && peak <= current + 4 * MiB,
		      "peak %.1f MiB, current %.1f MiB",
		      (double)peak / MiB, (double)current / MiB);
}
END_TEST

START_TEST(errno_is_preserved)
{
	errno = 4242;
	mc_rss_current();
	ck_assert_int_eq(errno, 4242);
	mc_rss_peak(NULL, NULL);
	ck_assert_int_eq(errno, 4242);
	mc_rss_reset_peak();
	ck_assert_int_eq(errno, 4242);
}
END_TEST

/* With no fd to spare every open fails (EMFILE): zeros, false, errno
 * untouched. */
START_TEST(no_fds_left)
{
	struct rlimit old, none = { 0, 0 };
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	none.rlim_max = old.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &none), 0);
	errno = 4242;
	uint64_t cur = mc_rss_current();
	uint64_t peak = mc_rss_peak(NULL, NULL);
	bool reset = mc_rss_reset_peak();
	int e = errno;
	setrlimit(RLIMIT_NOFILE, &old);
	ck_assert_uint_eq(cur, 0);
	ck_assert_uint_eq(peak, 0);
	ck_assert(!reset);
	ck_assert_int_eq(e, 4242);
}
END_TEST

/* read(2) calls, counted: rss.c makes them through syscall(2)
 * (sys.c's mc_sys_read), which this one wraps, passing on six
 * arguments whatever the call (as the C library's does). */
static int reads;

long syscall(long number, ...)
{
	static long (*next)(long, ...);
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_read)
		reads++;
	return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* statm and status are read with one read(2) each: the kernel hands the
 * whole text over at once, and a short read that ends a line is the end
 * (the read that would return 0 is not made). */
START_TEST(one_read_a_file)
{
	reads = 0;
	ck_assert_uint_gt(mc_rss_current(), 0);
	ck_assert_int_eq(reads, 1);
	ck_assert_uint_gt(mc_rss_peak(NULL, NULL), 0);
	ck_assert_int_eq(reads, 2);
}
END_TEST

static void *wait_for_go(void *arg)
{
	while (!__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

/* status's Threads: comes with VmHWM, from the same read: a region's end
 * learns from it that no other thread is there to stop (threads.c). */
START_TEST(threads_from_the_same_read)
{
	unsigned threads = 99;
	reads = 0;
	ck_assert_uint_gt(mc_rss_peak(&threads, NULL), 0);
	ck_assert_int_eq(reads, 1);
	ck_assert_uint_eq(threads, 1);
	int go = 0;
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, wait_for_go, &go), 0);
	ck_assert_uint_gt(mc_rss_peak(&threads, NULL), 0);
	ck_assert_uint_eq(threads, 2);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_uint_eq(mc_rss_current() > 0, 1);
	mc_rss_peak(&threads, NULL);
	ck_assert_uint_eq(threads, 1);
}
END_TEST

/* The three fields as the C library's parse of the same file reads
 * them (next_line finds the newlines eight bytes at a time): VmHWM only
 * rises, and nothing here touches memory between the two reads. */
START_TEST(status_fields_as_sscanf)
{
	/* twice: the first round faults in the code both parses run (the
	 * C library's code counts in the RSS) */
	for (int round = 0; round < 2; round++) {
		char text[8192];
		FILE *f = fopen("/proc/self/status", "r");
		ck_assert_ptr_nonnull(f);
		size_t n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = 0;
		unsigned long hwm = 0, rss = 0, thr = 0;
		ck_assert(sscanf(strstr(text, "\nVmHWM:") + 1, "VmHWM: %lu", &hwm) == 1);
		ck_assert(sscanf(strstr(text, "\nVmRSS:") + 1, "VmRSS: %lu", &rss) == 1);
		ck_assert(sscanf(strstr(text, "\nThreads:") + 1, "Threads: %lu", &thr) == 1);
		unsigned threads = 0;
		uint64_t now = 0, peak = mc_rss_peak(&threads, &now);
		if (round == 0)
			continue;
		ck_assert_uint_ge(peak, hwm * 1024);
		ck_assert_uint_le(peak, hwm * 1024 + 64 * 1024);
		ck_assert_uint_le(now > rss * 1024 ? now - rss * 1024 : rss * 1024 - now, 64 * 1024);
		ck_assert_uint_eq(threads, thr);
	}
}
END_TEST

/* status's VmRSS, from the read that gives the peak, is statm's RSS:
 * 40 MiB touched moves both by as much, and a statm read made right
 * after agrees with it to a few pages. */
START_TEST(rss_from_the_status_read)
{
	uint64_t before = 0, after = 0, threads_rss = 0;
	unsigned threads = 0;
	reads = 0;
	ck_assert_uint_gt(mc_rss_peak(NULL, &before), 0);
	ck_assert_int_eq(reads, 1);
	uint64_t statm = mc_rss_current();
	ck_assert_uint_le(before > statm ? before - statm : statm - before, 64 * 4096);
	size_t len = 40 * MiB;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	memset(p, 1, len);
	mc_rss_peak(&threads, &after);
	ck_assert_uint_eq(threads, 1);
	ck_assert_uint_ge(after, before + len - 64 * 4096);
	statm = mc_rss_current();
	ck_assert_uint_le(after > statm ? after - statm : statm - after, 64 * 4096);
	munmap(p, len);
	mc_rss_peak(NULL, &threads_rss);
	ck_assert_uint_lt(threads_rss, after - len / 2);
}
END_TEST

/* pthread_join returns as the kernel clears the thread's id, before the
 * thread leaves the count in /proc/self/stat (about one join in a
 * thousand still counted it here, and allocator.c's mimalloc figures took
 * the process for threaded): mc_threads_alone counts such a thread out
 * every time, and a thread that still runs in. */
static void *returns(void *arg)
{
	return arg;
}

static void *waits(void *arg)
{
	pthread_mutex_lock(arg);
	pthread_mutex_unlock(arg);
	return NULL;
}

/* Each thread's stat line, for the message of a failure. */
static void tasks_seen(char *out, size_t size)
{
	size_t len = 0;
	out[0] = 0;
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d)) && len < size;) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], line[512];
		snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f || !fgets(line, sizeof line, f))
			snprintf(line, sizeof line, "%s: unreadable\n", e->d_name);
		if (f)
			fclose(f);
		len += (size_t)snprintf(out + len, size - len, "[%s]", line);
	}
	if (d)
		closedir(d);
}

START_TEST(joined_threads_do_not_run)
{
	ck_assert(mc_threads_alone());
	for (int i = 0; i < 5000; i++) {
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, returns, NULL), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		if (!mc_threads_alone()) {
			char seen[2048];
			tasks_seen(seen, sizeof seen);
			ck_abort_msg("join %d: a thread joined counts as running; %s", i, seen);
		}
	}
	pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&hold);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, waits, &hold), 0);
	ck_assert(!mc_threads_alone());
	pthread_mutex_unlock(&hold);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert(mc_threads_alone());
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("rss", 60);
	tcase_add_test(tc, current_follows_touched_memory);
	tcase_add_test(tc, reset_peak_drops_to_current);
	tcase_add_test(tc, errno_is_preserved);
	tcase_add_test(tc, no_fds_left);
	tcase_add_test(tc, one_read_a_file);
	tcase_add_test(tc, threads_from_the_same_read);
	tcase_add_test(tc, rss_from_the_status_read);
	tcase_add_test(tc, status_fields_as_sscanf);
	tcase_add_test(tc, joined_threads_do_not_run);
	return h_run_suite(NULL);
}
