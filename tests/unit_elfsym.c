/*
 * unit_elfsym.c - lib/elfsym.c on its own: its lookups give what dlsym
 * gives (versioned names, IFUNCs, RTLD_NEXT's order), except for a
 * canonical PLT entry.  Built -no-pie and taking malloc's address in code,
 * so that this program has one (tests.mk: UNIT_FLAGS_elfsym).
 */
#include <check.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suite.h"

/* Taken in code: the linker makes the address the PLT stub's and lists
 * malloc in this program's dynamic symbol table with it. */
static void *(*volatile taken)(size_t);

static const char *const names[] = {
	"malloc", "free", "printf", "strlen",
	"memcpy",                 /* an IFUNC in the C library */
	"realpath",               /* two versions: dlsym takes the default */
	"pthread_cond_wait",      /* the same */
	"dlopen", "qsort",
};

START_TEST(first_definition_as_dlsym)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(names[i], "malloc") == 0)
			continue; /* below */
		void *want = dlsym(RTLD_DEFAULT, names[i]);
		ck_assert_msg(want != NULL, "dlsym(%s)", names[i]);
		ck_assert_msg(mc_sym_first(names[i], NULL) == want, "%s: %p, dlsym %p", names[i],
			      mc_sym_first(names[i], NULL), want);
	}
}
END_TEST

START_TEST(next_as_rtld_next)
{
	/* libmemcheck's objects are this program here: "next" is RTLD_NEXT
	 * from it */
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const void *where = NULL;
		void *got = mc_sym_next(names[i], &where);
		ck_assert_msg(got == dlsym(RTLD_NEXT, names[i]), "%s: %p, dlsym %p", names[i], got,
			      dlsym(RTLD_NEXT, names[i]));
		ck_assert_ptr_eq(where, mc_object_base(got, NULL));
	}
}
END_TEST

START_TEST(canonical_plt_entry_is_no_definition)
{
	taken = malloc;
	const void *self = mc_object_base((const void *)taken, NULL);
	/* dlsym gives the stub, in this program; the lookup gives the
	 * definition the stub jumps to */
	ck_assert_ptr_eq(dlsym(RTLD_DEFAULT, "malloc"), (void *)taken);
	const void *where = NULL;
	void *f = mc_sym_first("malloc", &where);
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_ne(f, (void *)taken);
	ck_assert_ptr_ne(where, self);
	ck_assert_ptr_eq(f, dlsym(RTLD_NEXT, "malloc"));
	ck_assert_ptr_null(mc_sym_in(self, "malloc"));
	void *p = ((void *(*)(size_t))f)(16); /* and it is malloc */
	ck_assert_ptr_nonnull(p);
	free(p);
}
END_TEST

START_TEST(in_one_object)
{
	const void *where = NULL;
	void *f = mc_sym_first("printf", &where);
	ck_assert_ptr_eq(mc_sym_in(where, "printf"), f);
	ck_assert_ptr_eq(mc_sym_in(where, "main"), NULL); /* this program's */
	ck_assert_ptr_eq(mc_sym_in(NULL, "printf"), NULL);
}
END_TEST

/* Many names in one walk: each as mc_sym_in finds it alone, a name
 * the object lacks NULL, and all NULL for no object. */
START_TEST(each_in_one_object)
{
	const void *where = NULL;
	mc_sym_first("printf", &where);
	static const char *const asked[] = { "printf", "main", "free", "no_such_function", "calloc",
					     "strlen" };
	void *found[MC_ARRAY_SIZE(asked)];
	mc_sym_in_each(where, asked, found, MC_ARRAY_SIZE(asked));
	for (size_t i = 0; i < MC_ARRAY_SIZE(asked); i++)
		ck_assert_ptr_eq(found[i], mc_sym_in(where, asked[i]));
	ck_assert_ptr_nonnull(found[0]);
	ck_assert_ptr_null(found[1]); /* this program's */
	ck_assert_ptr_null(found[3]);
	ck_assert_ptr_nonnull(found[5]); /* an IFUNC: its resolver's choice */
	mc_sym_in_each(NULL, asked, found, MC_ARRAY_SIZE(asked));
	for (size_t i = 0; i < MC_ARRAY_SIZE(asked); i++)
		ck_assert_ptr_null(found[i]);
}
END_TEST

START_TEST(unknown_names)
{
	ck_assert_ptr_null(mc_sym_first("no_such_function_anywhere", NULL));
	ck_assert_ptr_null(mc_sym_next("no_such_function_anywhere", NULL));
	ck_assert_ptr_null(mc_sym_first("", NULL));
	ck_assert_ptr_null(dlerror()); /* and no dlsym error left behind */
}
END_TEST

int main(void)
{
	TCase *tc = h_tcase("elfsym", 0);
	tcase_add_test(tc, first_definition_as_dlsym);
	tcase_add_test(tc, next_as_rtld_next);
	tcase_add_test(tc, canonical_plt_entry_is_no_definition);
	tcase_add_test(tc, in_one_object);
	tcase_add_test(tc, each_in_one_object);
	tcase_add_test(tc, unknown_names);
	return h_run_suite(NULL);
}
