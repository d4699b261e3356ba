/*
 * plain_tls_where.c - where the loaded objects' static TLS blocks lie in
 * the main thread, and at which offsets in their pages jemalloc puts
 * large blocks (it seeds their random in-page offset from its own TLS
 * block's address: cache-oblivious placement).  Run with address
 * randomization off (fixed_layout.h), both are the same run after run;
 * a preloaded libmemcheck whose own TLS block was not a multiple of
 * 64 bytes moved every later module's by 16 bytes, and with jemalloc's
 * the offsets (test_rss_self's "static TLS places").  libmemcheck's own
 * block is left out.
 * Prints "tls_where: NAME=ADDRESS ... blocks: OFFSET ..." on stdout.
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixed_layout.h"

static int one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *name = strrchr(info->dlpi_name, '/');
	name = name ? name + 1 : info->dlpi_name;
	if (info->dlpi_tls_modid && info->dlpi_tls_data && !strstr(name, "libmemcheck"))
		printf(" %s=%#lx", *name ? name : "main", (unsigned long)(uintptr_t)info->dlpi_tls_data);
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	rss_self_fixed_layout(argv);
	static const size_t sizes[] = { 20000, 40000, 70000, 100000, 20000, 16385, 300000 };
	void *p[sizeof sizes / sizeof sizes[0]];
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (!(p[i] = malloc(sizes[i])))
			return 2;
	printf("tls_where:");
	dl_iterate_phdr(one, NULL);
	printf(" blocks:");
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		printf(" %#lx", (unsigned long)((uintptr_t)p[i] & 4095));
		free(p[i]);
	}
	printf("\n");
	return 0;
}
