/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * check_run.h - the main() of every Check test program: run one suite and
 * exit non-zero if any test failed, or if none ran at all (a CK_RUN_CASE
 * or CK_RUN_SUITE from the environment that names nothing would otherwise
 * pass with zero tests).
 *
 * A program that leaves tests out where they do not apply (a variant, a
 * mode) passes the count of those left out of the selected test case to
 * run_suite_env_leaving_out: a case whose every test is left out here
 * exits 77 (automake's "skipped"), not 0 and not "no test ran".
 *
 * run_suite: fork mode (the unit tests): a hang becomes a tcase time-out,
 * and every test gets a fresh process (no visible readers table yet,
 * default settings).  run_suite_env: fork mode and verbosity from the
 * environment (CK_FORK, CK_VERBOSITY), for the programs run under
 * LD_PRELOAD, which choose per run.
 */
#ifndef LIBBRAVO_TESTS_CHECK_RUN_H
#define LIBBRAVO_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_RUN_SKIPPED 77

static inline int run_suite_as(Suite *s, enum fork_status fork_mode, enum print_output print,
			       int left_out)
{
	SRunner *sr = srunner_create(s);
	int ran, failed;

	if (fork_mode != CK_FORK_GETENV)
		srunner_set_fork_status(sr, fork_mode);
	srunner_run_all(sr, print);
	ran = srunner_ntests_run(sr);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (ran == 0) {
		const char *c = getenv("CK_RUN_CASE"), *t = getenv("CK_RUN_SUITE");

		if (left_out > 0) {
			fprintf(stderr, "SKIP: every test of CK_RUN_CASE=%s (%d) is left out here\n",
				c ? c : "", left_out);
			return CHECK_RUN_SKIPPED;
		}
		fprintf(stderr, "FAIL: no test ran (CK_RUN_SUITE=%s CK_RUN_CASE=%s)\n",
			t ? t : "", c ? c : "");
		return EXIT_FAILURE;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * A test case of s whose tests are each bounded by timeout seconds, so
 * that a hang is reported as a failure.
 */
static inline TCase *timed_tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

/*
 * timed_tcase() whose tests each start with setup() and end with
 * teardown() (if not NULL), in the test's own process: a checked fixture.
 */
static inline TCase *fixture_tcase(Suite *s, const char *name, double timeout, SFun setup,
				   SFun teardown)
{
	TCase *tc = timed_tcase(s, name, timeout);

	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

static inline int run_suite(Suite *s)
{
	return run_suite_as(s, CK_FORK, CK_NORMAL, 0);
}

static inline int run_suite_env(Suite *s)
{
	return run_suite_as(s, CK_FORK_GETENV, CK_ENV, 0);
}

static inline int run_suite_env_leaving_out(Suite *s, int left_out)
{
	return run_suite_as(s, CK_FORK_GETENV, CK_ENV, left_out);
}

#endif
