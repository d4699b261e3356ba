/* exit() while another thread still uses the C library's stdio and
 * locale data: valgrind kills it before its __libc_freeres; memcheck
 * cannot, and frees nothing (tests/test_wrapper.c): the thread runs on
 * with what it uses, the blocks stay counted in use at exit. */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int ready;

static void *worker(void *arg)
{
	(void)arg;
	char s[64];
	time_t t = 0;
	for (;;) {
		strftime(s, sizeof s, "%c", localtime(&t));
		snprintf(s, sizeof s, "%'d", 1234567);
		__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

int main(void)
{
	setlocale(LC_ALL, "");
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		;
	printf("done\n");
	exit(0);
}
