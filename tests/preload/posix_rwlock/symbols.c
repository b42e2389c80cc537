/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbols.c - tests/preload/posix_rwlock_test: which implementation
 * answered: the eleven pthread_rwlock_* functions resolve to the library
 * EXPECT_RWLOCK_LIB names.
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* Which implementation answered                                       */
/* ------------------------------------------------------------------ */

static void expect_defined_in(const char *what, const char *name, void *addr)
{
	Dl_info info;
	char buf[PATH_MAX];
	const char *base;

	ck_assert_msg(dladdr(addr, &info) != 0 && info.dli_fname,
		      "dladdr found no object for %s (%s at %p)", name, what, addr);
	snprintf(buf, sizeof(buf), "%s", info.dli_fname);
	base = basename(buf);
	ck_assert_msg(strcmp(base, expected_rwlock_lib()) == 0,
		      "%s (%s) is defined in %s (symbol %s), expected %s", name, what, info.dli_fname,
		      info.dli_sname ? info.dli_sname : "?", expected_rwlock_lib());
}

START_TEST(all_eleven_rwlock_symbols_resolve_non_null)
{
	for (size_t i = 0; i < NELEM(rwlock_fns); i++) {
		void *p = dlsym(RTLD_DEFAULT, rwlock_fns[i].name);

		ck_assert_msg(p != NULL, "dlsym(RTLD_DEFAULT, \"%s\") returned NULL: %s", rwlock_fns[i].name,
			      dlerror());
		ck_assert_msg(rwlock_fns[i].addr != NULL, "&%s is NULL", rwlock_fns[i].name);
	}
}
END_TEST

START_TEST(rwlock_symbols_from_dlsym_are_defined_in_expected_library)
{
	for (size_t i = 0; i < NELEM(rwlock_fns); i++) {
		void *p = dlsym(RTLD_DEFAULT, rwlock_fns[i].name);

		ck_assert_msg(p != NULL, "dlsym(RTLD_DEFAULT, \"%s\") returned NULL", rwlock_fns[i].name);
		expect_defined_in("dlsym(RTLD_DEFAULT)", rwlock_fns[i].name, p);
	}
}
END_TEST

START_TEST(rwlock_functions_called_by_program_are_defined_in_expected_library)
{
	/* addresses taken in this program's code: what its calls resolve to */
	expect_defined_in("address taken in the program", "pthread_rwlock_rdlock",
			  (void *)&pthread_rwlock_rdlock);
	for (size_t i = 0; i < NELEM(rwlock_fns); i++)
		expect_defined_in("address taken in the program", rwlock_fns[i].name, rwlock_fns[i].addr);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_symbols_tests(TCase *tc)
{
	tcase_add_test(tc, all_eleven_rwlock_symbols_resolve_non_null);
	tcase_add_test(tc, rwlock_symbols_from_dlsym_are_defined_in_expected_library);
	tcase_add_test(tc, rwlock_functions_called_by_program_are_defined_in_expected_library);
}
