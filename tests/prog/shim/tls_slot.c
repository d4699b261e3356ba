/* A library with thread-local storage of its own, built in several
 * copies (libtls_slotN.so) that tests/prog/plain_dtv_last.c dlopens one
 * after another: each copy is a TLS module of its own, with a DTV entry
 * in every thread, and its block (malloc'd by the dynamic linker at the
 * thread's first touch) reached only through that entry. */
#include <string.h>

static __thread char tls_slot_buf[200] = { 1 };

void *tls_slot_touch(void);

void *tls_slot_touch(void)
{
	memset(tls_slot_buf, 7, sizeof tls_slot_buf);
	return tls_slot_buf;
}
