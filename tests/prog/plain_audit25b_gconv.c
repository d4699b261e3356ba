/*
 * plain_audit25b_gconv.c - conversions from several character sets, as
 * libxml2's runtest makes: each iconv_open of a set glibc converts with
 * a module of its own loads that module (gconv_dl.c), and glibc keeps a
 * record of it in a tsearch tree for the rest of the process.  Four
 * sets, in this order, leave a node that only a pointer with tsearch's
 * colour bit reaches (five do not).
 */
#include <iconv.h>
#include <stdio.h>

int main(void)
{
	static const char *const sets[] = {
		"ISO-8859-2", "ISO-8859-3", "ISO-8859-4", "ISO-8859-5",
	};
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		iconv_t cd = iconv_open("UTF-8", sets[i]);
		if (cd == (iconv_t)-1) {
			perror(sets[i]);
			return 1;
		}
		iconv_close(cd);
	}
	puts("converted");
	return 0;
}
