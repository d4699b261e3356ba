/*
 * plain_leak_unfreed.c - blocks whose only copies are in memory the C
 * library's freeres frees, at an exit with another thread still
 * running or not (preloaded only, never linked to memcheck;
 * tests/test_valgrind.c).
 *
 * Usage: plain_leak_unfreed thread|alone.  A 39-byte block's address is
 * written to a fully buffered stdio stream on /dev/null and never
 * flushed (its only copy in stdio's buffer), and a 13-byte string given
 * to putenv (its only copy in the environment's array, which setenv's
 * freeres frees); "thread" leaves a second thread blocked in
 * pthread_cond_wait at the exit.  valgrind runs __libc_freeres before
 * its scan, the other threads killed first: both blocks definitely
 * lost.  memcheck cannot run it while another thread runs, and read the
 * buffer and the array: both still reachable ("alone": memcheck runs
 * freeres itself and said as valgrind already).  Before, it takes the
 * locale from the environment (LANG=C.UTF-8 in the test) and a message
 * catalogue's domain, whose blocks the C library keeps in chains that
 * its freeres frees whole: none of them lost, to valgrind or memcheck.
 */
#include <libintl.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *f;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_broadcast(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "thread") && strcmp(argv[1], "alone")))
		return 2;
	setlocale(LC_ALL, "");
	bindtextdomain("plain_leak_unfreed", "/nonexistent");
	textdomain("plain_leak_unfreed");
	if (!*gettext("a message"))
		return 1;
	f = fopen("/dev/null", "w");
	if (!f || setvbuf(f, NULL, _IOFBF, 4096) != 0)
		return 1;
	void *in_buf = malloc(39);
	memset(in_buf, 1, 39);
	fwrite(&in_buf, sizeof in_buf, 1, f);
	in_buf = NULL;
	if (putenv(strdup("UNFREED=yes")) != 0)
		return 1;
	if (!strcmp(argv[1], "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
		pthread_mutex_lock(&mu);
		while (!ready)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	return 0;
}
