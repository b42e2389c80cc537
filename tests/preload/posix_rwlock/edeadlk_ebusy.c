/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * edeadlk_ebusy.c - tests/preload/posix_rwlock_test: EDEADLK and EBUSY: a
 * lock call that would wait on the caller itself, and try-locks that find
 * the lock taken.
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* EDEADLK                                                             */
/* ------------------------------------------------------------------ */

START_TEST(rdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), EDEADLK);
	expect_still_write_held_then_release(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

START_TEST(timedrdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDRD, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(clockrdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKRD_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKRD_MONO, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(wrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(timedwrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(clockwrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(read_lock_while_holding_write_of_prefer_writer_lock_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	for (size_t i = 0; i < NELEM(rd_blocking_ops); i++)
		ck_assert_msg(op_rel(&l, rd_blocking_ops[i], 2000) == EDEADLK,
			      "%s while holding the write lock did not return EDEADLK",
			      op_names[rd_blocking_ops[i]]);
	for (size_t i = 0; i < NELEM(wr_blocking_ops); i++)
		ck_assert_msg(op_rel(&l, wr_blocking_ops[i], 2000) == EDEADLK,
			      "%s while holding the write lock did not return EDEADLK",
			      op_names[wr_blocking_ops[i]]);
	expect_still_write_held_then_release(&l);
}
END_TEST

/*
 * [list] the read hold taken through a reader fast path (BRAVO's
 * table, bias on after the warm-up), where the lock underneath is free
 */
START_TEST(write_locks_while_holding_fast_read_return_edeadlk_or_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	warm_reads(&l, 2000);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* Write holds of two locks, released first-taken first: each unlock finds its own. */
START_TEST(write_holds_of_two_locks_released_in_either_order_release_each)
{
	pthread_rwlock_t a, b;

	for (int order = 0; order < 2; order++) {
		init_default(&a);
		init_default(&b);
		ck_assert_rc(pthread_rwlock_wrlock(&a), 0);
		ck_assert_rc(pthread_rwlock_wrlock(&b), 0);
		ck_assert_rc(pthread_rwlock_unlock(order ? &b : &a), 0);
		ck_assert_other(order ? &b : &a, OP_TRYWR, 0, 0);
		ck_assert_other(order ? &a : &b, OP_TRYRD, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(order ? &a : &b), 0);
		ck_assert_other(order ? &a : &b, OP_TRYWR, 0, 0);
		pthread_rwlock_destroy(&a);
		pthread_rwlock_destroy(&b);
	}
}
END_TEST

/*
 * [list] glibc deadlocks here (reader_calls.c: where glibc's lock
 * answers for reads, BRAVO-pthread outside strict mode, so does libbravo)
 */
START_TEST(wrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [list] */
START_TEST(timedwrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [list] */
START_TEST(clockwrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [list] the check must not wait for the other readers to leave */
START_TEST(wrlock_while_holding_read_beside_other_readers_returns_edeadlk)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, false);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

/* [list] recursive read holds, then a write attempt */
START_TEST(wrlock_while_holding_read_recursively_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (int i = 0; i < 3; i++)
		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* EBUSY                                                               */
/* ------------------------------------------------------------------ */

START_TEST(tryrdlock_while_other_thread_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(tryrdlock_while_caller_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(trywrlock_while_other_thread_holds_read_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, false);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(trywrlock_while_other_thread_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(trywrlock_while_caller_holds_read_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	expect_still_read_held_then_release(&l);
}
END_TEST

START_TEST(trywrlock_while_caller_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(tryrdlock_while_caller_holds_read_succeeds_and_needs_matching_unlock)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	/* one read lock is still held */
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	ck_assert_other(&l, OP_TRYRD, 0, 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

START_TEST(tryrdlock_while_other_threads_hold_read_succeeds)
{
	pthread_rwlock_t l;
	struct holder h1, h2;

	init_default(&l);
	holder_start(&h1, &l, false);
	holder_start(&h2, &l, false);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	holder_stop(&h1);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	holder_stop(&h2);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_edeadlk_tests(TCase *tc)
{
	tcase_add_test(tc, rdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, timedrdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, clockrdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, wrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, timedwrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, clockwrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, read_lock_while_holding_write_of_prefer_writer_lock_returns_edeadlk);
	ADD_LISTED_TEST(tc, wrlock_while_holding_read_returns_edeadlk);
	ADD_LISTED_TEST(tc, timedwrlock_while_holding_read_returns_edeadlk);
	ADD_LISTED_TEST(tc, clockwrlock_while_holding_read_returns_edeadlk);
	ADD_LISTED_TEST(tc, wrlock_while_holding_read_beside_other_readers_returns_edeadlk);
	ADD_LISTED_TEST(tc, wrlock_while_holding_read_recursively_returns_edeadlk);
	ADD_LISTED_TEST(tc, write_locks_while_holding_fast_read_return_edeadlk_or_ebusy);
}

/*
 * Strict mode (BRAVO_CHECK=1) lists every hold under every variant,
 * BRAVO-pthread's slow ones included: the [list] checks hold there too.
 */
void add_strict_edeadlk_tests(TCase *tc)
{
	tcase_add_test(tc, wrlock_while_holding_read_returns_edeadlk);
	tcase_add_test(tc, timedwrlock_while_holding_read_returns_edeadlk);
	tcase_add_test(tc, clockwrlock_while_holding_read_returns_edeadlk);
	tcase_add_test(tc, wrlock_while_holding_read_beside_other_readers_returns_edeadlk);
	tcase_add_test(tc, wrlock_while_holding_read_recursively_returns_edeadlk);
	tcase_add_test(tc, write_locks_while_holding_fast_read_return_edeadlk_or_ebusy);
}

void add_ebusy_tests(TCase *tc)
{
	tcase_add_test(tc, tryrdlock_while_other_thread_holds_write_returns_ebusy);
	tcase_add_test(tc, tryrdlock_while_caller_holds_write_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_other_thread_holds_read_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_other_thread_holds_write_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_caller_holds_read_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_caller_holds_write_returns_ebusy);
	tcase_add_test(tc, write_holds_of_two_locks_released_in_either_order_release_each);
	tcase_add_test(tc, tryrdlock_while_caller_holds_read_succeeds_and_needs_matching_unlock);
	tcase_add_test(tc, tryrdlock_while_other_threads_hold_read_succeeds);
}
