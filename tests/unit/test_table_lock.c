/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_table_lock.c - the guard of libbravo's own tables
 * (src/interpose/table_lock.h): every signal blocked and cancellation off
 * while a table's mutex is held, the caller's mask and cancel state back
 * afterwards, and one guard around several tables (table_guard_begin)
 * that the table_lock calls inside neither repeat nor lift.  With the
 * pool (src/interpose/pool.c), whose allocations take a table.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "../../src/interpose/pool.h"
#include "../../src/interpose/table_lock.h"
#include "../lib/check_run.h"

static pthread_mutex_t table_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t table_b = PTHREAD_MUTEX_INITIALIZER;

static sigset_t mask_now(void)
{
	sigset_t now;

	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
	return now;
}

/* Every signal the kernel lets a thread block is blocked. */
static void assert_all_blocked(const char *where)
{
	sigset_t now = mask_now();

	/*
	 * SIGKILL and SIGSTOP cannot be blocked; glibc never blocks the two
	 * real-time signals below SIGRTMIN that it keeps for itself.
	 */
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP || (sig >= 32 && sig < SIGRTMIN))
			continue;
		ck_assert_msg(sigismember(&now, sig) == 1, "%s: signal %d not blocked", where, sig);
	}
}

static void assert_mask_is(const sigset_t *want, const char *where)
{
	sigset_t now = mask_now();

	for (int sig = 1; sig < NSIG; sig++)
		ck_assert_msg(sigismember(&now, sig) == sigismember(want, sig),
			      "%s: signal %d is %sblocked", where, sig,
			      sigismember(&now, sig) ? "" : "not ");
}

static int cancel_state_now(void)
{
	int state;

	ck_assert_int_eq(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state), 0);
	ck_assert_int_eq(pthread_setcancelstate(state, NULL), 0);
	return state;
}

/* A caller's own mask: SIGUSR2 blocked, the rest not. */
static sigset_t caller_mask(void)
{
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &m, NULL), 0);
	return m;
}

START_TEST(table_lock_blocks_every_signal_and_cancellation_until_unlock)
{
	sigset_t mine = caller_mask();
	struct table_guard g;

	table_lock(&table_a, &g);
	assert_all_blocked("inside table_lock");
	ck_assert_int_eq(cancel_state_now(), PTHREAD_CANCEL_DISABLE);
	table_unlock(&table_a, &g);
	assert_mask_is(&mine, "after table_unlock");
	ck_assert_int_eq(cancel_state_now(), PTHREAD_CANCEL_ENABLE);
}
END_TEST

START_TEST(table_lock_inside_a_guard_leaves_it_in_force_after_unlock)
{
	sigset_t mine = caller_mask();
	struct table_guard outer, g;

	table_guard_begin(&outer);
	table_lock(&table_a, &g);
	table_unlock(&table_a, &g);
	assert_all_blocked("after an inner table_unlock");
	ck_assert_int_eq(cancel_state_now(), PTHREAD_CANCEL_DISABLE);
	table_lock(&table_b, &g);
	table_unlock(&table_b, &g);
	assert_all_blocked("after a second inner table_unlock");
	table_guard_end(&outer);
	assert_mask_is(&mine, "after table_guard_end");
	ck_assert_int_eq(cancel_state_now(), PTHREAD_CANCEL_ENABLE);
}
END_TEST

START_TEST(guards_nest_and_the_outermost_restores)
{
	sigset_t mine = caller_mask();
	struct table_guard outer, inner;

	table_guard_begin(&outer);
	table_guard_begin(&inner);
	table_guard_end(&inner);
	assert_all_blocked("after the inner guard's end");
	table_guard_end(&outer);
	assert_mask_is(&mine, "after the outer guard's end");
	ck_assert_uint_eq(table_guarded, 0);
}
END_TEST

static atomic_int usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&usr1_seen, 1);
}

START_TEST(signal_raised_inside_a_guard_is_delivered_after_its_end)
{
	struct sigaction sa;
	struct table_guard outer, g;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	(void)caller_mask();
	table_guard_begin(&outer);
	table_lock(&table_a, &g);
	ck_assert_int_eq(pthread_kill(pthread_self(), SIGUSR1), 0);
	table_unlock(&table_a, &g);
	ck_assert_int_eq(atomic_load(&usr1_seen), 0);
	table_guard_end(&outer);
	ck_assert_int_eq(atomic_load(&usr1_seen), 1);
}
END_TEST

START_TEST(pool_allocations_inside_a_guard_keep_it)
{
	sigset_t mine = caller_mask();
	struct table_guard outer;
	void *p, *q;

	table_guard_begin(&outer);
	p = pool_alloc(64);
	q = pool_alloc(8192); /* whole pages: no table */
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	pool_free(p, 64);
	pool_free(q, 8192);
	assert_all_blocked("after pool_alloc and pool_free");
	table_guard_end(&outer);
	assert_mask_is(&mine, "after table_guard_end");
}
END_TEST

static Suite *table_lock_suite(void)
{
	Suite *s = suite_create("table_lock");
	TCase *tc = tcase_create("guard");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, table_lock_blocks_every_signal_and_cancellation_until_unlock);
	tcase_add_test(tc, table_lock_inside_a_guard_leaves_it_in_force_after_unlock);
	tcase_add_test(tc, guards_nest_and_the_outermost_restores);
	tcase_add_test(tc, signal_raised_inside_a_guard_is_delivered_after_its_end);
	tcase_add_test(tc, pool_allocations_inside_a_guard_keep_it);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(table_lock_suite());
}
