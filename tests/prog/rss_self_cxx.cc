// rss_self_cxx - plain_rss_self's C++ counterpart: containers, strings
// and iostream, then its own resident set (rss_self.h) printed.  With
// "throw", exceptions thrown and caught too: libgcc's unwinder then
// reads the same .eh_frame_hdr and .eh_frame pages of libstdc++ and libc
// that memcheck's stacks read (the pages memcheck faulted in first stay
// its own: test_rss_self shows how far that moves the figures).
#include <cstring>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "rss_self.h"

// Through libstdc++'s code: std::map::at throws std::out_of_range.
static int thrown(const std::map<int, std::string> &m, int key)
{
	try {
		return static_cast<int>(m.at(key).size());
	} catch (const std::out_of_range &) {
		return -1;
	}
}

int main(int argc, char **argv)
{
	rss_self_fixed_layout(argv);
	bool throwing = argc > 1 && std::strcmp(argv[1], "throw") == 0;
	long long start = proc_field("/proc/self/status", "VmRSS:");
	{
		std::vector<std::string> words;
		std::map<int, std::string> byLength;
		for (int i = 0; i < 1000; i++) {
			words.push_back(std::string(static_cast<size_t>(i % 50 + 20), 'a' + i % 26));
			byLength[i % 64] = words.back();
		}
		int missed = 0;
		for (int i = 0; throwing && i < 200; i++)
			missed += thrown(byLength, 64 + i) < 0;
		if (throwing)
			std::cout << "missed " << missed << std::endl;
		std::cout << "words " << words.size() << ", lengths " << byLength.size() << ", "
			  << 1.5 * static_cast<double>(words.size()) << std::endl;
	}
	rss_self_print(start);
	return 0;
}
