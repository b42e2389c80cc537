/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lifecycle.c - tests/preload/posix_rwlock_test: a lock's life and kind:
 * static initializers and zeroed memory, writer preference, destroy and
 * re-init (glibc's results; strict mode's EBUSY and EINVAL).
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* Initializers and zeroed memory                                      */
/* ------------------------------------------------------------------ */

static pthread_rwlock_t static_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t static_wp_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t static_wp_lock2 = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

START_TEST(static_initializer_lock_works_without_init)
{
	check_basic_usage(&static_lock);
}
END_TEST

START_TEST(writer_nonrecursive_initializer_lock_works_without_init)
{
	check_basic_usage(&static_wp_lock);
}
END_TEST

START_TEST(calloc_zeroed_lock_works_without_init)
{
	pthread_rwlock_t *l = calloc(1, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	check_basic_usage(l);
	free(l);
}
END_TEST

START_TEST(many_calloc_zeroed_locks_work_without_init)
{
	enum { N = 1000 };
	pthread_rwlock_t *l = calloc(N, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	for (int i = 0; i < N; i++)
		ck_assert_rc(i % 2 ? pthread_rwlock_rdlock(&l[i]) : pthread_rwlock_wrlock(&l[i]), 0);
	for (int i = 0; i < N; i += 97)
		ck_assert_other(&l[i], OP_TRYRD, 0, i % 2 ? 0 : EBUSY);
	for (int i = 0; i < N; i++)
		ck_assert_rc(pthread_rwlock_unlock(&l[i]), 0);
	for (int i = 0; i < N; i += 97)
		ck_assert_other(&l[i], OP_TRYWR, 0, 0);
	free(l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writer preference (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)     */
/* ------------------------------------------------------------------ */

static void check_new_reader_refused_while_writer_waits(pthread_rwlock_t *l)
{
	struct waiter w;

	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	waiter_start(&w, l, OP_WR, 0, false);
	wait_until_new_readers_refused(l, &w);
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while a read lock was held");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	waiter_release_and_join(&w);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
}

START_TEST(tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_prefer_writer_kind)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_new_reader_refused_while_writer_waits(&l);
}
END_TEST

START_TEST(tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_writer_nonrecursive_initializer)
{
	check_new_reader_refused_while_writer_waits(&static_wp_lock2);
}
END_TEST

START_TEST(rdlock_by_new_reader_waits_behind_waiting_writer_for_prefer_writer_kind)
{
	pthread_rwlock_t l;
	struct waiter w, r;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, true);
	wait_until_new_readers_refused(&l, &w);
	waiter_start(&r, &l, OP_RD, 0, false);
	waiter_expect_blocked(&r);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&r.done), "the new reader got in while the writer held the lock (%s)",
		      errname(r.rc));
	sem_post(&w.release);
	ck_assert_waiter_gets_through(&r, 0, "new reader after the writer left");
	ck_assert_msg(w.seq < r.seq, "the new reader got the lock before the writer that waited first");
	waiter_release_and_join(&w);
	waiter_release_and_join(&r);
}
END_TEST

START_TEST(timed_rdlock_by_new_reader_times_out_while_writer_waits_for_prefer_writer_kind)
{
	pthread_rwlock_t l;
	struct waiter w;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, false);
	wait_until_new_readers_refused(&l, &w);
	ck_assert_other(&l, OP_TIMEDRD, 30, ETIMEDOUT);
	ck_assert_other(&l, OP_CLOCKRD_MONO, 30, ETIMEDOUT);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	waiter_release_and_join(&w);
	ck_assert_other(&l, OP_TRYRD, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Destroy and re-init                                                 */
/* ------------------------------------------------------------------ */

START_TEST(destroy_of_idle_lock_returns_0)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

START_TEST(destroy_of_static_initializer_lock_returns_0)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t m = PTHREAD_RWLOCK_INITIALIZER;

	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&m), 0);
	ck_assert_rc(pthread_rwlock_unlock(&m), 0);
	ck_assert_rc(pthread_rwlock_destroy(&m), 0);
}
END_TEST

START_TEST(destroyed_then_reinitialized_lock_works)
{
	pthread_rwlock_t l;

	for (int round = 0; round < 4; round++) {
		if (round % 2)
			init_prefer_writer(&l);
		else
			init_default(&l);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
	init_default(&l);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/*
 * [default] glibc's destroy does nothing and returns 0; libbravo's default
 * mode too: a held lock stays held and usable (well-defined under glibc).
 */
START_TEST(destroy_of_lock_the_caller_holds_returns_0_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;

		init_default(&l);
		ck_assert_rc(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_other(&l, OP_TRYRD, 0, write ? EBUSY : 0);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, 0);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [default] */
START_TEST(destroy_of_lock_another_thread_holds_returns_0_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;
		struct holder h;

		init_default(&l);
		holder_start_warm(&h, &l, write, 20);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
		ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
		ck_assert_rc(pthread_rwlock_tryrdlock(&l), write ? EBUSY : 0);
		if (!write)
			ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		holder_stop(&h);
		ck_assert_other(&l, OP_TRYWR, 0, 0);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [default] glibc: destroy is a no-op, so a destroyed lock works as before. */
START_TEST(calls_on_a_destroyed_lock_work_as_on_glibc)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	check_basic_usage(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	for (enum op op = 0; op < OP_COUNT; op++) {
		ck_assert_msg(op_rel(&l, op, 100) == 0, "%s on a destroyed lock did not return 0",
			      op_names[op]);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/* [strict] EBUSY from destroy of a held or waited lock, which stays held. */
START_TEST(strict_destroy_of_held_lock_returns_ebusy_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;
		struct holder h;

		init_default(&l);
		ck_assert_rc(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
		ck_assert_rc(pthread_rwlock_destroy(&l), EBUSY);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		holder_start(&h, &l, write);
		ck_assert_rc(pthread_rwlock_destroy(&l), EBUSY);
		ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
		holder_stop(&h);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [strict] any call on a destroyed lock is EINVAL; init makes it a lock again. */
START_TEST(strict_calls_on_a_destroyed_lock_return_einval)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), EINVAL);
	for (enum op op = 0; op < OP_COUNT; op++) {
		int rc = op_rel(&l, op, 100);

		ck_assert_msg(rc == EINVAL, "%s on a destroyed lock returned %s, expected EINVAL",
			      op_names[op], errname(rc));
	}
	ck_assert_rc(pthread_rwlock_unlock(&l), EINVAL);
	init_default(&l);
	check_basic_usage(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_initializers_tests(TCase *tc)
{
	tcase_add_test(tc, static_initializer_lock_works_without_init);
	tcase_add_test(tc, writer_nonrecursive_initializer_lock_works_without_init);
	tcase_add_test(tc, calloc_zeroed_lock_works_without_init);
	tcase_add_test(tc, many_calloc_zeroed_locks_work_without_init);
}

void add_writer_preference_tests(TCase *tc)
{
	tcase_add_test(tc, tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_prefer_writer_kind);
	tcase_add_test(tc, tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_writer_nonrecursive_initializer);
	tcase_add_test(tc, rdlock_by_new_reader_waits_behind_waiting_writer_for_prefer_writer_kind);
	tcase_add_test(tc, timed_rdlock_by_new_reader_times_out_while_writer_waits_for_prefer_writer_kind);
}

void add_destroy_tests(TCase *tc)
{
	tcase_add_test(tc, destroy_of_idle_lock_returns_0);
	tcase_add_test(tc, destroy_of_static_initializer_lock_returns_0);
	tcase_add_test(tc, destroyed_then_reinitialized_lock_works);
	ADD_DEFAULT_TEST(tc, destroy_of_lock_the_caller_holds_returns_0_and_the_lock_stays_held);
	ADD_DEFAULT_TEST(tc, destroy_of_lock_another_thread_holds_returns_0_and_the_lock_stays_held);
	ADD_DEFAULT_TEST(tc, calls_on_a_destroyed_lock_work_as_on_glibc);
}

void add_strict_destroy_tests(TCase *tc)
{
	tcase_add_test(tc, strict_destroy_of_held_lock_returns_ebusy_and_the_lock_stays_held);
	tcase_add_test(tc, strict_calls_on_a_destroyed_lock_return_einval);
}
