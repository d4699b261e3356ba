/*
 * fw_site.h - the allocation the frameworks' suites of
 * tests/prog/glib/, cunit/, catch2/ and doctest/ leak
 * (tests/test_frameworks.c): the line marked SITE is where a leak's
 * failure must point.  C and C++ alike.
 */
#ifndef FW_SITE_H
#define FW_SITE_H

#include <stdlib.h>
#include <string.h>

static char *copy_of(const char *s)
{
	char *p = (char *)malloc(strlen(s) + 1); /* SITE copy_of */
	strcpy(p, s);
	return p;
}

#endif
