/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_stats_hist.c - the revocation-time histogram of the statistics
 * (src/diag/stats.h): where a time falls, and what its bucket's middle says.
 */
#include <check.h>
#include <stdint.h>

#include "../../src/diag/stats.h"
#include "../lib/check_run.h"

/* Times across the range: every ns up to 4096, then steps of 1/32. */
static uint64_t next_time(uint64_t ns)
{
	return ns < 4096 ? ns + 1 : ns + ns / 32 + 1;
}

START_TEST(small_times_have_buckets_of_their_own)
{
	for (uint64_t ns = 0; ns < 16; ns++) {
		ck_assert_uint_eq(rev_hist_bucket(ns), ns);
		ck_assert_uint_eq(rev_hist_middle(rev_hist_bucket(ns)), ns);
	}
}
END_TEST

START_TEST(middle_within_a_sixteenth_of_every_time_in_the_bucket)
{
	for (uint64_t ns = 1; ns < (UINT64_C(1) << 40); ns = next_time(ns)) {
		uint64_t mid = rev_hist_middle(rev_hist_bucket(ns));
		uint64_t diff = mid > ns ? mid - ns : ns - mid;

		ck_assert_msg(16 * diff <= ns, "ns=%llu middle=%llu", (unsigned long long)ns,
			      (unsigned long long)mid);
	}
}
END_TEST

START_TEST(buckets_never_decrease_with_time)
{
	unsigned last = 0;

	for (uint64_t ns = 0; ns < (UINT64_C(1) << 42); ns = next_time(ns)) {
		unsigned b = rev_hist_bucket(ns);

		ck_assert_uint_ge(b, last);
		ck_assert_uint_lt(b, REV_HIST_BUCKETS);
		last = b;
	}
}
END_TEST

START_TEST(every_bucket_is_reached)
{
	unsigned char hit[REV_HIST_BUCKETS] = { 0 };

	for (uint64_t ns = 0; ns < (UINT64_C(1) << 41); ns = next_time(ns))
		hit[rev_hist_bucket(ns)] = 1;
	for (unsigned i = 0; i < REV_HIST_BUCKETS; i++)
		ck_assert_msg(hit[i], "bucket %u never used", i);
}
END_TEST

START_TEST(times_of_256_and_300_ns_fall_apart)
{
	ck_assert_uint_ne(rev_hist_bucket(256), rev_hist_bucket(300));
	ck_assert_uint_eq(rev_hist_bucket(256), rev_hist_bucket(287));
	ck_assert_uint_eq(rev_hist_bucket(288), rev_hist_bucket(319));
	ck_assert_uint_eq(rev_hist_middle(rev_hist_bucket(300)), 304);
}
END_TEST

START_TEST(huge_times_share_the_last_bucket)
{
	ck_assert_uint_eq(rev_hist_bucket(UINT64_C(1) << 40), REV_HIST_BUCKETS - 1);
	ck_assert_uint_eq(rev_hist_bucket(UINT64_MAX), REV_HIST_BUCKETS - 1);
}
END_TEST

static Suite *stats_hist_suite(void)
{
	Suite *s = suite_create("stats_hist");
	TCase *tc = timed_tcase(s, "histogram", 60);

	tcase_add_test(tc, small_times_have_buckets_of_their_own);
	tcase_add_test(tc, middle_within_a_sixteenth_of_every_time_in_the_bucket);
	tcase_add_test(tc, buckets_never_decrease_with_time);
	tcase_add_test(tc, every_bucket_is_reached);
	tcase_add_test(tc, times_of_256_and_300_ns_fall_apart);
	tcase_add_test(tc, huge_times_share_the_last_bucket);
	return s;
}

int main(void)
{
	return run_suite(stats_hist_suite());
}
