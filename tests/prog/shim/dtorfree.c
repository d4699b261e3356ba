/* A library whose destructor frees a block an API call allocated, as
 * libuv frees its uv_setup_args process title at exit
 * (tests/test_exitorder25.c).  DTORFREE_END="_exit N", "_Exit N" or
 * "exit N": the destructor then ends the process so, after the free. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *title;
void dtorfree_set(const char *s)
{
	title = malloc(strlen(s) + 1);
	strcpy(title, s);
}
__attribute__((destructor)) static void dtorfree_fini(void)
{
	free(title);
	title = NULL;
	const char *end = getenv("DTORFREE_END");
	if (!end)
		return;
	const char *sp = strchr(end, ' ');
	int status = sp ? atoi(sp + 1) : 0;
	if (!strncmp(end, "_exit", 5))
		_exit(status);
	if (!strncmp(end, "_Exit", 5))
		_Exit(status);
	if (!strncmp(end, "exit", 4))
		exit(status);
}
