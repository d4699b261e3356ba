// rss_self_cxx - plain_rss_self's C++ counterpart: containers, strings
// and iostream, then its own resident set (rss_self.h) printed.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "rss_self.h"

int main(int, char **argv)
{
	rss_self_fixed_layout(argv);
	long long start = proc_field("/proc/self/status", "VmRSS:");
	{
		std::vector<std::string> words;
		std::map<int, std::string> byLength;
		for (int i = 0; i < 1000; i++) {
			words.push_back(std::string(static_cast<size_t>(i % 50 + 20), 'a' + i % 26));
			byLength[i % 64] = words.back();
		}
		std::cout << "words " << words.size() << ", lengths " << byLength.size() << ", "
			  << 1.5 * static_cast<double>(words.size()) << std::endl;
	}
	rss_self_print(start);
	return 0;
}
