/* leak.c - a test that passes but leaks the block it allocates; through
 * the project's library when built with one (parse_name in name.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *parse_name(const char *s);

int main(void)
{
	char *name = parse_name("leak");
	if (!name)
		return 99;
	printf("parsed %s\n", name);
	return 0;
}
