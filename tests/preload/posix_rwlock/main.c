/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * main.c - tests/preload/posix_rwlock_test: integration tests of the POSIX
 * rwlock API.  This file assembles the suite; the tests are in the other
 * files of tests/preload/posix_rwlock/, one or a few sections each.
 *
 * An ordinary pthread program: it knows nothing of libbravo.  It is run
 * under LD_PRELOAD of each libbravo variant (tests/preload/run), and
 * without preload against glibc, so that the suite also validates itself.
 *
 * Environment:
 *   RWLOCK_UNDER_TEST=glibc  skip the checks that only libbravo promises
 *                            (they are marked [libbravo] and are not
 *                            registered; a line on stderr names each one).
 *   BRAVO_CHECK=1            libbravo's strict mode (tests/preload/run runs
 *                            the test case "strict" so, CK_RUN_CASE=strict):
 *                            the checks of its errors ([strict]) are
 *                            registered, and those of the default mode's
 *                            glibc results ([default]) are not.
 *   EXPECT_RWLOCK_LIB=NAME   basename of the object that must define the
 *                            pthread_rwlock_* functions (default libc.so.6).
 *
 * Internal entry points (used by tests, which re-execute this binary):
 *   posix_rwlock_test --pshared-exec-child PATH READ_FD WRITE_FD
 *   posix_rwlock_test --unlock-misuse-child write-held|free
 */
#include "posix_rwlock.h"
#include "../../lib/check_run.h"

/*
 * The test case being filled, and how many tests of the case CK_RUN_CASE
 * selects the registration macros left out: a selected case with none
 * registered is skipped, not failed (check_run.h).
 */
static const char *case_being_filled = "";
static int left_out_of_selected_case;

void test_left_out(const char *why, const char *fn)
{
	const char *selected = getenv("CK_RUN_CASE");

	fprintf(stderr, "%s: %s\n", why, fn);
	if (selected && strcmp(selected, case_being_filled) == 0)
		left_out_of_selected_case++;
}

static TCase *new_tcase(Suite *s, const char *name, double timeout)
{
	case_being_filled = name;
	return timed_tcase(s, name, timeout);
}

/* The test cases, in this order, each with its time-out. */
static Suite *rwlock_suite(void)
{
	Suite *s = suite_create("posix_rwlock");
	TCase *tc;

	add_edeadlk_tests(new_tcase(s, "edeadlk", 10));
	add_ebusy_tests(new_tcase(s, "ebusy", 10));
	add_reader_calls_tests(new_tcase(s, "reader_calls", 20));
	add_unlock_unheld_tests(new_tcase(s, "unlock_unheld", 10));

	/* [strict]: BRAVO_CHECK=1 (tests/preload/run: CK_RUN_CASE=strict). */
	if (strict_mode()) {
		tc = new_tcase(s, "strict", 10);
		add_strict_edeadlk_tests(tc);
		add_strict_unlock_tests(tc);
		add_strict_destroy_tests(tc);
		add_strict_pshared_tests(tc);
	}

	add_timed_tests(new_tcase(s, "timed", 15));
	add_exclusion_tests(new_tcase(s, "exclusion", 20));
	add_phases_tests(new_tcase(s, "phases", 20));
	add_recursion_tests(new_tcase(s, "recursion", 15));
	add_initializers_tests(new_tcase(s, "initializers", 10));
	add_writer_preference_tests(new_tcase(s, "writer_preference", 15));
	add_destroy_tests(new_tcase(s, "destroy", 10));
	add_pshared_tests(new_tcase(s, "pshared", 20));

	/*
	 * "long": the reruns of tests/preload/run (the profile on, jemalloc
	 * first) leave it out (CK_EXCLUDE_TAGS); the plain run has it.
	 */
	tc = new_tcase(s, "scale", 60);
	tcase_set_tags(tc, "long");
	add_scale_threads_tests(tc);
	add_scale_churn_tests(tc);
	add_scale_leak_tests(tc);

	add_symbols_tests(new_tcase(s, "symbols", 10));
	return s;
}

int main(int argc, char **argv)
{
	Suite *s;

	if (argc > 1 && strcmp(argv[1], "--pshared-exec-child") == 0)
		return pshared_exec_child(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--unlock-misuse-child") == 0)
		return unlock_misuse_child(argc, argv);

	s = rwlock_suite(); /* counts what it leaves out: before the run */

	return run_suite_env_leaving_out(s, left_out_of_selected_case);
}
