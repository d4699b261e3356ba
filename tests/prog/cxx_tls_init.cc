/*
 * cxx_tls_init.cc - a block lost through a C++ thread_local's dynamic
 * initialisation, for tests/test_trial_aliases.c.  GCC emits the
 * initialisation as a function with two names at one address and size:
 * the global _ZTH6tl_ptr ("TLS init function for tl_ptr") and the local
 * __tls_init; valgrind names the frame by the shorter, __tls_init.
 *
 * A thread reads tl_ptr, whose initialiser allocates 48 bytes; the
 * thread ends and its copy of the pointer with it: the block is
 * definitely lost (48 bytes in 1 block), as valgrind says.  With the
 * argument "none" the thread frees it first.
 */
#include <cstdlib>
#include <cstring>
#include <thread>

thread_local char *tl_ptr = static_cast<char *>(std::malloc(48));

int main(int argc, char **argv)
{
	bool lose = !(argc == 2 && std::strcmp(argv[1], "none") == 0);
	std::thread t([lose] {
		std::memset(tl_ptr, 1, 48);
		if (!lose)
			std::free(tl_ptr);
		tl_ptr = nullptr;
	});
	t.join();
	return 0;
}
