/*
 * plain_getaddrinfo.c - a name looked up with its canonical name asked
 * (AI_CANONNAME, AI_IDN and AI_CANONIDN, as getent ahosts asks), for
 * tests/test_valgrind.c: getaddrinfo decodes that
 * name through libidn2, which the C library loads for itself with its
 * private dlopen and never closes: __libc_freeres, which valgrind runs
 * at exit and memcheck's valgrind command line runs too, leaves its
 * link maps, names and version tables in use, and valgrind lists them
 * still reachable (1,715 bytes in 5 blocks; its dependency libunistring
 * 1,322 in 3).  Everything of the program's own is freed.
 *
 * usage: plain_getaddrinfo [NAME]   (default localhost; exit 1 when the
 *        lookup fails)
 */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_CANONNAME | AI_IDN | AI_CANONIDN;
	int rc = getaddrinfo(argc > 1 ? argv[1] : "localhost", NULL, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "plain_getaddrinfo: %s\n", gai_strerror(rc));
		return 1;
	}
	printf("%s\n", res->ai_canonname ? res->ai_canonname : "(none)");
	freeaddrinfo(res);
	return 0;
}
