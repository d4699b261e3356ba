/* A library whose destructor frees a block an API call allocated, as
 * libuv frees its uv_setup_args process title at exit
 * (tests/test_exitorder24.c). */
#include <stdlib.h>
#include <string.h>

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
}
