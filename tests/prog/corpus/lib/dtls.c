/* libcorpus_dtls.so, for tests/prog/corpus/dlopen_tls.c: a library with
 * general-dynamic thread-local storage, so dlopen gives each thread a
 * block of it allocated with malloc and reached only from the thread's
 * DTV. */
#include <stdlib.h>

__thread void *dtls_slot;
__thread char dtls_big[256];

void *dtls_keep(size_t n)
{
	dtls_big[0] = 1;
	return dtls_slot = malloc(n);
}
