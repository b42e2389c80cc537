/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exclusion.c - tests/preload/posix_rwlock_test: writers exclude a reader
 * that has read the lock many times, a reader descheduled across writer
 * phases still gets in, and recursive read locks while a writer waits.
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* Writers exclude a reader that has been reading the lock a while      */
/* ------------------------------------------------------------------ */

/*
 * The reader thread reads the lock many times before it keeps it, so that
 * any reader fast path an implementation has is in use.  A failed write
 * attempt (how) must leave the lock as it was: the writers that come next
 * are still kept out until the reader leaves.
 */
enum failed_write { FW_NONE, FW_TRYWRLOCK, FW_TIMEDWRLOCK_50MS, FW_CLOCKWRLOCK_PAST, FW_CLOCKWRLOCK_50MS };

static void check_writers_wait_for_warm_reader(pthread_rwlock_t *l, enum failed_write how)
{
	struct timespec past = { 1, 0 };
	struct holder h;
	struct waiter w;

	holder_start_warm(&h, l, false, 2000);
	switch (how) {
	case FW_NONE:
		break;
	case FW_TRYWRLOCK:
		ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
		break;
	case FW_TIMEDWRLOCK_50MS:
		ck_assert_rc(op_rel(l, OP_TIMEDWR, 50), ETIMEDOUT);
		break;
	case FW_CLOCKWRLOCK_PAST:
		ck_assert_rc(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &past), ETIMEDOUT);
		break;
	case FW_CLOCKWRLOCK_50MS:
		ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 50), ETIMEDOUT);
		break;
	}
	/* the reader still holds the lock: writers are still kept out */
	if (how != FW_NONE) {
		ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
		ck_assert_rc(op_rel(l, OP_TIMEDWR, 30), ETIMEDOUT);
		ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 30), ETIMEDOUT);
		ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	}
	waiter_start(&w, l, OP_WR, 0, false);
	waiter_expect_blocked(&w);
	holder_stop(&h);
	ck_assert_waiter_gets_through(&w, 0, "writer after the reader left");
	waiter_release_and_join(&w);
}

static void check_writers_wait_for_warm_reader_all_kinds(enum failed_write how)
{
	for (int round = 0; round < 2; round++) {
		pthread_rwlock_t a, b = PTHREAD_RWLOCK_INITIALIZER, c;

		init_default(&a);
		init_prefer_writer(&c);
		check_writers_wait_for_warm_reader(&a, how);
		check_writers_wait_for_warm_reader(&a, how);
		check_writers_wait_for_warm_reader(&b, how);
		check_writers_wait_for_warm_reader(&c, how);
	}
}

START_TEST(wrlock_waits_for_reader_that_read_the_lock_many_times)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_NONE);
}
END_TEST

START_TEST(trywrlock_refused_by_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_TRYWRLOCK);
}
END_TEST

START_TEST(timedwrlock_timing_out_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_TIMEDWRLOCK_50MS);
}
END_TEST

START_TEST(clockwrlock_with_past_deadline_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_CLOCKWRLOCK_PAST);
}
END_TEST

START_TEST(clockwrlock_timing_out_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_CLOCKWRLOCK_50MS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A waiting reader that is descheduled across writer phases            */
/* ------------------------------------------------------------------ */

/*
 * A signal handler parks the waiting reader's thread (inside its lock call)
 * while the lock changes hands: the writer it waited for leaves, a timed
 * writer comes and gives up, another writer comes and waits.  When the
 * reader runs again it must not mistake the third writer for the first.
 */
static atomic_int pause_state; /* 0 idle, 1 paused in the handler, 2 resume */

static void pause_handler(int sig)
{
	(void)sig;
	atomic_store(&pause_state, 1);
	while (atomic_load(&pause_state) != 2) {
		struct timespec t = { 0, 1000000 };

		nanosleep(&t, NULL);
	}
}

static void pause_thread(pthread_t th)
{
	struct sigaction sa;
	struct timespec start = ts_now(CLOCK_MONOTONIC);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pause_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ck_assert_rc(sigaction(SIGUSR1, &sa, NULL), 0);
	atomic_store(&pause_state, 0);
	ck_assert_rc(pthread_kill(th, SIGUSR1), 0);
	while (atomic_load(&pause_state) != 1) {
		ck_assert_msg(ms_since(start) < 3000, "the reader thread did not run its signal handler");
		sleep_ms(1);
	}
}

static void resume_thread(void)
{
	atomic_store(&pause_state, 2);
}

static void check_paused_reader_across_writer_phases(enum op rop, long rop_ms, long pause_ms)
{
	pthread_rwlock_t l;
	struct waiter r, w3;
	struct timespec paused_at;
	int rc;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);     /* writer 1 */
	waiter_start(&r, &l, rop, rop_ms, false);
	waiter_expect_blocked(&r);
	pause_thread(r.th);
	paused_at = ts_now(CLOCK_MONOTONIC);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);     /* writer 1 leaves */
	rc = op_rel(&l, OP_TIMEDWR, 50);                 /* writer 2 gives up */
	ck_assert_msg(rc == 0 || rc == ETIMEDOUT, "timedwrlock returned %s", errname(rc));
	if (rc == 0)
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	waiter_start(&w3, &l, OP_WR, 0, false);          /* writer 3 waits */
	sleep_ms(50);
	while (ms_since(paused_at) < pause_ms)
		sleep_ms(5);
	resume_thread();
	ck_assert_msg(waiter_wait_done(&r, 5000),
		      "the reader (%s) is still blocked 5 s after it was resumed (the writer it was "
		      "blocked by left long ago; a later writer is waiting)",
		      op_names[rop]);
	ck_assert_msg(r.rc == 0 || (op_is_timed(rop) && r.rc == ETIMEDOUT), "%s returned %s", op_names[rop],
		      errname(r.rc));
	ck_assert_msg(waiter_wait_done(&w3, 5000),
		      "the last writer is still blocked 5 s after the reader (%s, which returned %s) "
		      "was resumed", op_names[rop], errname(r.rc));
	ck_assert_rc(w3.rc, 0);
	waiter_release_and_join(&r);
	waiter_release_and_join(&w3);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(reader_descheduled_across_two_writer_phases_still_gets_in)
{
	check_paused_reader_across_writer_phases(OP_RD, 0, 0);
}
END_TEST

START_TEST(timed_reader_descheduled_past_its_deadline_across_writer_phases_leaves_lock_usable)
{
	check_paused_reader_across_writer_phases(OP_TIMEDRD, 300, 500);
	check_paused_reader_across_writer_phases(OP_CLOCKRD_MONO, 300, 500);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Recursive read locking while a writer waits                         */
/* ------------------------------------------------------------------ */

static void check_recursive_reads_while_writer_waits(enum op op)
{
	pthread_rwlock_t l;
	struct waiter w;
	const int n = 1000;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, false);
	waiter_expect_blocked(&w);
	for (int i = 1; i < n; i++) {
		int rc = op_rel(&l, op, 50);

		ck_assert_msg(rc == 0, "recursive read lock #%d with %s while a writer waits returned %s",
			      i + 1, op_names[op], errname(rc));
	}
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while %d read locks were held", n);
	for (int i = 1; i < n; i++)
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while one read lock was still held");
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "writer after the recursive reader left");
	waiter_release_and_join(&w);
}

START_TEST(rdlock_1000_times_while_writer_waits_then_writer_acquires)
{
	check_recursive_reads_while_writer_waits(OP_RD);
}
END_TEST

START_TEST(tryrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_TRYRD);
}
END_TEST

START_TEST(timedrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_TIMEDRD);
}
END_TEST

START_TEST(clockrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_CLOCKRD_MONO);
	check_recursive_reads_while_writer_waits(OP_CLOCKRD_RT);
}
END_TEST

START_TEST(recursive_reads_on_many_locks_are_counted_per_lock)
{
	enum { N = 40 };
	pthread_rwlock_t l[N];

	for (int i = 0; i < N; i++)
		init_default(&l[i]);
	for (int i = 0; i < N; i++)
		for (int k = 0; k <= i % 4; k++)
			ck_assert_rc(pthread_rwlock_rdlock(&l[i]), 0);
	/* release in a scrambled order, lock by lock */
	for (int j = 0; j < N; j++) {
		int i = (j * 17) % N;

		for (int k = 0; k <= i % 4; k++) {
			ck_assert_other(&l[i], OP_TRYWR, 0, EBUSY);
			ck_assert_rc(pthread_rwlock_unlock(&l[i]), 0);
		}
		ck_assert_other(&l[i], OP_TRYWR, 0, 0);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_exclusion_tests(TCase *tc)
{
	tcase_add_test(tc, wrlock_waits_for_reader_that_read_the_lock_many_times);
	tcase_add_test(tc, trywrlock_refused_by_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, timedwrlock_timing_out_on_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, clockwrlock_with_past_deadline_on_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, clockwrlock_timing_out_on_reader_leaves_later_writers_excluded);
}

void add_phases_tests(TCase *tc)
{
	tcase_add_test(tc, reader_descheduled_across_two_writer_phases_still_gets_in);
	tcase_add_test(tc, timed_reader_descheduled_past_its_deadline_across_writer_phases_leaves_lock_usable);
}

void add_recursion_tests(TCase *tc)
{
	tcase_add_test(tc, rdlock_1000_times_while_writer_waits_then_writer_acquires);
	tcase_add_test(tc, tryrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, timedrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, clockrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, recursive_reads_on_many_locks_are_counted_per_lock);
}
