/* A dlopen'd library's dynamic thread-local storage: the main thread's
 * block of it and another thread's (blocked at exit), each allocated by
 * the C library and reached only from the thread's DTV, each holding
 * the only pointer to a block of the program's.  valgrind: the main
 * thread's reachable; the other thread's DTV is reached only through
 * an interior pointer (possibly lost), and so what hangs from it. */
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include "corpus.h"

static void *(*keep)(size_t);
static volatile int ready;

static void *worker(void *arg)
{
	(void)arg;
	USE(keep(72));
	__atomic_store_n(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	(void)argc;
	char path[4096];
	strcpy(path, argv[0]);
	strcpy(strrchr(path, '/') + 1, "libcorpus_dtls.so");
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		return 2;
	*(void **)&keep = dlsym(h, "dtls_keep");
	USE(keep(40));
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&ready, __ATOMIC_SEQ_CST))
		usleep(1000);
	exit(0);
}
