/* reject.c - a tool that rejects bad input on purpose: it parses the
 * name, finds it bad, says so and exits 1, leaving the parsed copy to the
 * exit, as tools that exit from deep in their parser do (wayland-scanner
 * on a bad protocol file).  Its tests expect that failure: CTest's
 * WILL_FAIL, meson's should_fail, automake's XFAIL_TESTS, or a script
 * that checks it (expect.sh). */
#include <stdio.h>
#include <stdlib.h>

char *parse_name(const char *s);

int main(void)
{
	char *name = parse_name("bad input");
	if (!name)
		return 99;
	fprintf(stderr, "rejected: %s\n", name);
	return 1;
}
