// An exception thrown and caught: libstdc++'s emergency pool (allocated
// at its start) stays to the end, where valgrind frees it with
// __gnu_cxx::__freeres (tests/test_wrapper.c).  With "uncaught" a second
// one is not caught: std::terminate aborts, valgrind runs no freeres and
// lists the pool still reachable (tests/test_valgrind.c).
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

int main(int argc, char **argv)
{
	try {
		throw std::runtime_error(std::string(40, 'x'));
	} catch (const std::exception &e) {
		std::printf("%zu\n", std::string(e.what()).size());
	}
	if (argc > 1 && !std::strcmp(argv[1], "uncaught"))
		throw std::logic_error(std::string(90, 'u'));
	return 0;
}
