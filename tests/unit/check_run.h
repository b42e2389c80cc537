/*
 * check_run.h - the main() of every unit test program: run one Check
 * suite in fork mode and exit non-zero if any test failed.  Fork mode
 * turns a hang into a tcase time-out, and gives every test a fresh
 * process (no visible readers table yet, default settings).
 */
#ifndef LIBBRAVO_TESTS_CHECK_RUN_H
#define LIBBRAVO_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
