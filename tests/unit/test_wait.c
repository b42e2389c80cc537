/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_wait.c - unit tests for the spin-then-park primitive (locks/wait.h).
 *
 * Every test is bounded: a park that never returns becomes a tcase time-out,
 * which check reports as a failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../locks/wait.h"
#include "../lib/check_run.h"
#include "../lib/test_util.h"
#include "timespec_util.h"


/* ---- deadline_passed ---- */

START_TEST(deadline_passed_is_false_without_deadline)
{
	struct deadline none = { .abstime = NULL, .clock = CLOCK_MONOTONIC };

	ck_assert(!deadline_passed(NULL));
	ck_assert(!deadline_passed(&none));
}
END_TEST

START_TEST(deadline_passed_is_true_for_negative_seconds)
{
	struct timespec ts = { .tv_sec = -1, .tv_nsec = 0 };
	struct deadline dl = { .abstime = &ts, .clock = clocks[_i] };

	ck_assert(deadline_passed(&dl));
	ts.tv_sec = -1000000;
	ts.tv_nsec = 999999999;
	ck_assert(deadline_passed(&dl));
}
END_TEST

START_TEST(deadline_passed_is_true_for_past_time)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], -1000 * 1000L);

	ck_assert(deadline_passed(&dl));
}
END_TEST

START_TEST(deadline_passed_is_false_for_future_time)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], 60 * 1000 * 1000L);

	ck_assert(!deadline_passed(&dl));
}
END_TEST

/* ---- wait_park ---- */

START_TEST(park_returns_etimedout_at_past_deadline)
{
	_Atomic uint32_t word = 7;
	struct deadline dl = DEADLINE_IN(clocks[_i], -1000 * 1000L);

	ck_assert_int_eq(wait_park(&word, 7, &dl), ETIMEDOUT);
	ck_assert_uint_eq(word, 7);
}
END_TEST

START_TEST(park_returns_etimedout_at_negative_deadline)
{
	_Atomic uint32_t word = 7;
	struct timespec ts = { .tv_sec = -5, .tv_nsec = 0 };
	struct deadline dl = { .abstime = &ts, .clock = clocks[_i] };

	ck_assert_int_eq(wait_park(&word, 7, &dl), ETIMEDOUT);
}
END_TEST

START_TEST(park_returns_etimedout_once_near_deadline_passes)
{
	/* Goes through the kernel's timed wait on this clock. */
	_Atomic uint32_t word = 7;
	struct deadline dl = DEADLINE_IN(clocks[_i], 20 * 1000L);
	int r;

	do
		r = wait_park(&word, 7, &dl); /* 0 only on a signal: retry */
	while (r == 0);
	ck_assert_int_eq(r, ETIMEDOUT);
	ck_assert(deadline_passed(&dl));
}
END_TEST

START_TEST(park_returns_zero_at_once_when_word_differs)
{
	_Atomic uint32_t word = 5;

	/* No deadline: if this slept, only the tcase time-out would end it. */
	ck_assert_int_eq(wait_park(&word, 4, NULL), 0);
}
END_TEST

START_TEST(park_with_future_deadline_returns_zero_when_word_differs)
{
	_Atomic uint32_t word = 5;
	struct deadline dl = DEADLINE_IN(clocks[_i], 60 * 1000 * 1000L);

	ck_assert_int_eq(wait_park(&word, 4, &dl), 0);
}
END_TEST

struct parker {
	_Atomic uint32_t word;
	const struct deadline *dl;
	atomic_bool started;
	atomic_bool done;
	int result;
};

static void *park_thread(void *arg)
{
	struct parker *p = arg;

	atomic_store(&p->started, true);
	p->result = wait_park(&p->word, 0, p->dl);
	atomic_store(&p->done, true);
	return NULL;
}

/* Wake until the parker has returned: a wake before it parks is harmless. */
static void wake_until_done(struct parker *p)
{
	while (!atomic_load(&p->started))
		usleep(100);
	while (!atomic_load(&p->done)) {
		wait_wake(&p->word, 1);
		usleep(1000);
	}
}

START_TEST(park_returns_when_woken_by_another_thread)
{
	struct parker p = { .word = 0, .dl = NULL };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, park_thread, &p), 0);
	wake_until_done(&p);
	pthread_join(t, NULL);
	ck_assert_int_eq(p.result, 0);
	ck_assert_uint_eq(p.word, 0); /* woken, not released by a changed word */
}
END_TEST

START_TEST(timed_park_returns_zero_when_woken_before_deadline)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], 60 * 1000 * 1000L);
	struct parker p = { .word = 0, .dl = &dl };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, park_thread, &p), 0);
	wake_until_done(&p);
	pthread_join(t, NULL);
	ck_assert_int_eq(p.result, 0);
	ck_assert(!deadline_passed(&dl));
}
END_TEST

START_TEST(wake_without_sleepers_is_harmless)
{
	_Atomic uint32_t word = 3;

	wait_wake(&word, 1);
	wait_wake(&word, 1 << 30);
	ck_assert_uint_eq(word, 3);
}
END_TEST

/* ---- wait_spin ---- */

START_TEST(spin_reports_word_that_already_differs)
{
	_Atomic uint32_t word = 0x12;

	ck_assert(wait_spin(&word, 0xff, 0x10));
}
END_TEST

START_TEST(spin_gives_up_on_unchanged_word)
{
	_Atomic uint32_t word = 0x12;

	ck_assert(!wait_spin(&word, 0xff, 0x12));
	/* Bits outside the mask do not count as a change. */
	ck_assert(!wait_spin(&word, 0xf0, 0x1f));
}
END_TEST

/* ---- the policy: who may spin, and holding back ---- */

START_TEST(cpus_are_the_affinity_mask)
{
	cpu_set_t set;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	ck_assert_uint_eq(wait_cpus(), (unsigned)CPU_COUNT(&set));
	ck_assert_uint_ge(wait_cpus(), 1);
}
END_TEST

START_TEST(spin_pays_only_with_fewer_threads_than_cpus)
{
	ck_assert(wait_spin_pays(0));
	ck_assert(wait_spin_pays(wait_cpus() - 1));
	ck_assert(!wait_spin_pays(wait_cpus()));
	ck_assert(!wait_spin_pays(UINT32_MAX));
}
END_TEST

START_TEST(defer_is_bounded)
{
	unsigned yields = 0, n = 0;

	while (wait_defer(&yields))
		n++;
	ck_assert_uint_eq(n, WAIT_DEFER_YIELDS);
	ck_assert_uint_eq(yields, WAIT_DEFER_YIELDS);
	ck_assert(!wait_defer(&yields));
}
END_TEST

START_TEST(preempt_rate_is_oversubscribed_from_100_a_second_per_cpu)
{
	const uint64_t second = 1000000000u;

	ck_assert(wait_preempt_rate_oversubscribed(WAIT_PREEMPTS_PER_CPU, second, 1));
	ck_assert(!wait_preempt_rate_oversubscribed(WAIT_PREEMPTS_PER_CPU - 1, second, 1));
	ck_assert(wait_preempt_rate_oversubscribed(2 * WAIT_PREEMPTS_PER_CPU, second, 2));
	ck_assert(!wait_preempt_rate_oversubscribed(2 * WAIT_PREEMPTS_PER_CPU - 1, second, 2));
	/* the same rate over 10 ms; none at all; an empty interval */
	ck_assert(wait_preempt_rate_oversubscribed(WAIT_PREEMPTS_PER_CPU / 100, second / 100, 1));
	ck_assert(!wait_preempt_rate_oversubscribed(0, second, 1));
	ck_assert(!wait_preempt_rate_oversubscribed(5, 0, 1));
	/* a window of days on 8192 CPUs: no overflow into a false yes */
	ck_assert(!wait_preempt_rate_oversubscribed(1000, 86400 * second, 8192));
}
END_TEST

START_TEST(a_first_look_is_not_oversubscribed)
{
	/* a fresh process (check forks each test): no interval yet to judge */
	ck_assert(!wait_oversubscribed());
}
END_TEST

static _Atomic bool busy_stop;

static void *busy_loop(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&busy_stop, memory_order_relaxed))
		cpu_relax();
	return NULL;
}

START_TEST(oversubscribed_once_threads_share_one_cpu)
{
	cpu_set_t all, one;
	pthread_t t[3];
	bool over = false;

	/* Four runnable threads on the first CPU of the mask: the kernel must time-slice them. */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	ck_assert_uint_eq(wait_cpus_init(), 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, busy_loop, NULL), 0);
	/*
	 * Bounded: looks a millisecond apart for at most 3 s.  The looker
	 * spins between looks, a fourth runnable thread: sleeping would hand
	 * its CPU to the others.
	 */
	for (int i = 0; i < 3000 && !(over = wait_oversubscribed()); i++) {
		struct timespec start = ts_now(CLOCK_MONOTONIC);

		while (ts_diff_ns(ts_now(CLOCK_MONOTONIC), start) < 1000000)
			cpu_relax();
	}
	atomic_store_explicit(&busy_stop, true, memory_order_relaxed);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ck_assert_msg(over, "four runnable threads on one CPU never read as oversubscribed");
}
END_TEST

/* A fake lock: [0] readers inside, [1] departures; each look at [1] bumps [2]. */
static uint32_t fake_inside(const void *arg)
{
	return atomic_load_explicit(&((_Atomic uint32_t *)arg)[0], memory_order_relaxed);
}

static uint32_t fake_departed(const void *arg)
{
	_Atomic uint32_t *f = (_Atomic uint32_t *)arg;

	/* A reader that leaves on the third look (and another arrives): progress. */
	if (atomic_fetch_add_explicit(&f[2], 1, memory_order_relaxed) == 2 && f[3])
		atomic_fetch_add_explicit(&f[1], 1, memory_order_relaxed);
	return atomic_load_explicit(&f[1], memory_order_relaxed);
}

START_TEST(spin_progress_sees_none_inside_or_a_departure)
{
	static const struct wait_readers r = { fake_inside, fake_departed };
	_Atomic uint32_t none[4] = { 0, 7, 0, 0 }, stuck[4] = { 1, 7, 0, 0 }, moving[4] = { 1, 7, 0, 1 };

	ck_assert(wait_spin_progress(&r, (const void *)none));
	ck_assert(!wait_spin_progress(&r, (const void *)stuck));
	ck_assert(wait_spin_progress(&r, (const void *)moving));
}
END_TEST

static Suite *wait_suite(void)
{
	Suite *s = suite_create("wait");
	TCase *tc;

	tc = timed_tcase(s, "deadline", 30);
	tcase_add_test(tc, deadline_passed_is_false_without_deadline);
	tcase_add_loop_test(tc, deadline_passed_is_true_for_negative_seconds, 0, 2);
	tcase_add_loop_test(tc, deadline_passed_is_true_for_past_time, 0, 2);
	tcase_add_loop_test(tc, deadline_passed_is_false_for_future_time, 0, 2);

	tc = timed_tcase(s, "park", 30);
	tcase_add_loop_test(tc, park_returns_etimedout_at_past_deadline, 0, 2);
	tcase_add_loop_test(tc, park_returns_etimedout_at_negative_deadline, 0, 2);
	tcase_add_loop_test(tc, park_returns_etimedout_once_near_deadline_passes, 0, 2);
	tcase_add_test(tc, park_returns_zero_at_once_when_word_differs);
	tcase_add_loop_test(tc, park_with_future_deadline_returns_zero_when_word_differs, 0, 2);
	tcase_add_test(tc, park_returns_when_woken_by_another_thread);
	tcase_add_loop_test(tc, timed_park_returns_zero_when_woken_before_deadline, 0, 2);
	tcase_add_test(tc, wake_without_sleepers_is_harmless);

	tc = timed_tcase(s, "spin", 30);
	tcase_add_test(tc, spin_reports_word_that_already_differs);
	tcase_add_test(tc, spin_gives_up_on_unchanged_word);
	tcase_add_test(tc, cpus_are_the_affinity_mask);
	tcase_add_test(tc, spin_pays_only_with_fewer_threads_than_cpus);
	tcase_add_test(tc, defer_is_bounded);
	tcase_add_test(tc, spin_progress_sees_none_inside_or_a_departure);
	tcase_add_test(tc, preempt_rate_is_oversubscribed_from_100_a_second_per_cpu);
	tcase_add_test(tc, a_first_look_is_not_oversubscribed);
	tcase_add_test(tc, oversubscribed_once_threads_share_one_cpu);
	return s;
}

int main(void)
{
	return run_suite(wait_suite());
}
