/*
 * plain_clean.c - programs that free everything they allocate, yet leave
 * blocks behind under valgrind: the C library's, the allocator's and
 * libstdc++'s own, which the files in suppressions/ account for
 * (tests/test_vgsupp.c).  No stdio; not linked to memcheck.
 *
 * usage: plain_clean [plain|threads|serial|together|dlopen|all|serial-all]
 *   plain    a few malloc-family calls, all freed
 *   threads  also start and join threads (glibc's DTV and TLS blocks)
 *   serial   the same threads, each joined before the next starts: how
 *            many run at once no longer depends on their speed
 *   together the same threads, all four alive at once: each starts its
 *            churn once all have started and ends once all have done
 *            it, so every allocator sees four threads' blocks at once
 *            whatever their speed
 *   dlopen   also dlopen/dlclose a library, setlocale and newlocale
 *            (glibc's dlopen and locale data)
 *   all      threads, then dlopen
 *   serial-all  serial, then dlopen
 */
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static __thread char tls_buf[64];

static void churn(void)
{
	void *a = malloc(100), *b = calloc(4, 32), *c = realloc(NULL, 10);
	c = realloc(c, 1000);
	free(a);
	free(b);
	free(c);
}

static pthread_barrier_t gate;

static void *worker(void *arg)
{
	tls_buf[0] = (char)(long)arg;
	churn();
	return NULL;
}

static void *together_worker(void *arg)
{
	pthread_barrier_wait(&gate);
	worker(arg);
	pthread_barrier_wait(&gate);
	return NULL;
}

/* Four threads, all alive while each one churns (together). */
static int together(void)
{
	pthread_t t[4];
	if (pthread_barrier_init(&gate, NULL, 4) != 0)
		return 1;
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, together_worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return pthread_barrier_destroy(&gate) != 0;
}

static int threads(bool serial)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
		if (serial)
			pthread_join(t[i], NULL);
	}
	for (int i = 0; !serial && i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static int loading(void)
{
	/* libm: in every glibc install, and not linked here. */
	void *h = dlopen("libm.so.6", RTLD_NOW);
	if (!h)
		return 1;
	if (!dlsym(h, "cos"))
		return 2;
	dlclose(h);
	if (!setlocale(LC_ALL, "C.UTF-8"))
		return 3;
	locale_t l = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	if (!l)
		return 4;
	locale_t old = uselocale(l);
	uselocale(old);
	freelocale(l);
	setlocale(LC_ALL, "C");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	churn();
	bool serial = strncmp(mode, "serial", 6) == 0;
	if (strcmp(mode, "threads") == 0 || strcmp(mode, "serial") == 0)
		return threads(serial);
	if (strcmp(mode, "together") == 0)
		return together();
	if (strcmp(mode, "dlopen") == 0)
		return loading();
	if (strcmp(mode, "all") == 0 || strcmp(mode, "serial-all") == 0)
		return threads(serial) || loading();
	return strcmp(mode, "plain") == 0 ? 0 : 9;
}
