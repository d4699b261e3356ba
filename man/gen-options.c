/* gen-options.c - print memcheck(7)'s option list from lib/options.def. */
#include "internal.h"

int main(void)
{
	mc_options_mdoc(1);
	return 0;
}
