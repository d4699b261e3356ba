// An exception thrown and caught: libstdc++'s emergency pool (allocated
// at its start) stays to the end, where valgrind frees it with
// __gnu_cxx::__freeres (tests/test_wrapper.c).
#include <cstdio>
#include <stdexcept>
#include <string>

int main()
{
	try {
		throw std::runtime_error(std::string(40, 'x'));
	} catch (const std::exception &e) {
		std::printf("%zu\n", std::string(e.what()).size());
	}
	return 0;
}
