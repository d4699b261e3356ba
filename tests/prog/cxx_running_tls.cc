/*
 * cxx_running_tls.cc - a C++ program that exits while a thread of its
 * own still runs: a thread_local string in each thread, the running
 * thread's std::thread state still in use.  valgrind kills the thread,
 * then runs libstdc++'s __gnu_cxx::__freeres (its emergency exception
 * pool) and the C library's __libc_freeres, and counts what they free
 * as freed: not in use at exit, not suppressed.  memcheck cannot run
 * them while another thread runs (lib/life.c): the blocks they would
 * free are counted freed as valgrind counts them (lib/supp_region.c,
 * tests/test_valgrind.c running_thread_freeres_as_valgrinds).
 *
 * Usage: cxx_running_tls.  Exits 0.
 */
#include <atomic>
#include <string>
#include <thread>

#include <unistd.h>

static std::atomic<int> started;
thread_local std::string name;

int main()
{
	std::thread t([] {
		name.assign(100, 'x');
		started = 1;
		for (;;)
			pause();
	});
	t.detach();
	while (!started)
		usleep(1000);
	name.assign(60, 'y');
	return 0;
}
