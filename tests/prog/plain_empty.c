/*
 * plain_empty.c - a program that does nothing.  What memcheck counts for
 * it is what the allocator and the libraries it brings allocate on their
 * own before main (libstdc++'s emergency pool under jemalloc and
 * tcmalloc, tcmalloc's own blocks): the process region counts those, as
 * valgrind does, and tests take them off to get a program's own figures.
 * Not linked to memcheck.
 */
int main(void)
{
	return 0;
}
