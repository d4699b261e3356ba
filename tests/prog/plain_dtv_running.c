/*
 * plain_dtv_running.c - threads still running when the process exits,
 * beside a stack glibc keeps in its cache.  Three threads run at once
 * and are joined (three stacks cached, each with its DTV), then two
 * more start, which take two of those stacks, and block in pause()
 * until the exit.  valgrind kills them, runs __libc_freeres, which
 * frees the cached stack's DTV, and finds each running thread's DTV
 * possibly lost (its descriptor points one entry into it): one record
 * of 2 blocks, 1 error.
 * memcheck cannot run freeres while another thread runs; glibc.supp's
 * "# freeres: libc" entry takes the cached DTV, and the running
 * threads' are listed as valgrind lists them (tests/test_valgrind.c,
 * running_threads_dtvs_as_valgrinds).
 *
 * Usage: plain_dtv_running.  Exits 0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int started;

static void *joined(void *arg)
{
	return arg;
}

static void *running(void *arg)
{
	atomic_fetch_add(&started, 1);
	for (;;)
		pause();
	return arg;
}

int main(void)
{
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, joined, NULL))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, running, NULL))
			return 1;
	while (atomic_load(&started) < 2)
		usleep(1000);
	return 0;
}
