/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timed.c - tests/preload/posix_rwlock_test: timed and clock locks: EINVAL
 * for a bad deadline or clock, ETIMEDOUT, success with a past deadline,
 * and the lock left usable by waiters that gave up.
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* Timed variants: EINVAL, ETIMEDOUT, success with a past deadline      */
/* ------------------------------------------------------------------ */

static const long bad_nsecs[] = { -1, 1000000000L, LONG_MIN, LONG_MAX };

static void expect_einval_for_bad_nsec(const enum op *ops, size_t n, bool holder_writes)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < NELEM(bad_nsecs); j++) {
			struct timespec abs = ts_now(op_clock(ops[i]));
			int rc;

			abs.tv_sec += 1;
			abs.tv_nsec = bad_nsecs[j];
			rc = op_abs(&l, ops[i], &abs);
			ck_assert_msg(rc == EINVAL, "%s with tv_nsec=%ld on a lock held %s by another thread "
				      "returned %s, expected EINVAL", op_names[ops[i]], bad_nsecs[j],
				      holder_writes ? "for writing" : "for reading", errname(rc));
		}
	}
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}

START_TEST(timedrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDRD }, 1, true);
}
END_TEST

START_TEST(clockrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKRD_RT, OP_CLOCKRD_MONO }, 2, true);
}
END_TEST

START_TEST(timedwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDWR }, 1, false);
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDWR }, 1, true);
}
END_TEST

START_TEST(clockwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2, false);
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2, true);
}
END_TEST

/*
 * glibc 2.36 checks the deadline first, even when the lock is free or the
 * caller holds it for writing (EINVAL before EDEADLK); libbravo does the
 * same.  Nothing is taken.
 */
START_TEST(timed_locks_with_invalid_nsec_return_einval_even_on_a_free_lock)
{
	static const enum op ops[] = { OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO,
				       OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
	pthread_rwlock_t l;

	init_default(&l);
	for (int own = 0; own < 2; own++) {
		if (own)
			ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
		for (size_t i = 0; i < NELEM(ops); i++) {
			for (size_t j = 0; j < NELEM(bad_nsecs); j++) {
				struct timespec abs = ts_now(op_clock(ops[i]));
				int rc;

				abs.tv_sec += 1;
				abs.tv_nsec = bad_nsecs[j];
				rc = op_abs(&l, ops[i], &abs);
				ck_assert_msg(rc == EINVAL, "%s with tv_nsec=%ld on a lock %s returned %s, "
					      "expected EINVAL", op_names[ops[i]], bad_nsecs[j],
					      own ? "the caller write-holds" : "that is free", errname(rc));
				if (!own)
					ck_assert_other(&l, OP_TRYWR, 0, 0);
			}
		}
		if (own)
			ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

static const clockid_t bad_clocks[] = {
	CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
	CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, 4711, -1,
};

static void expect_einval_for_bad_clock(bool write)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, !write);
	for (size_t j = 0; j < NELEM(bad_clocks); j++) {
		struct timespec abs = ts_add_ms(ts_now(CLOCK_REALTIME), 1000);
		int rc = write ? pthread_rwlock_clockwrlock(&l, bad_clocks[j], &abs)
			       : pthread_rwlock_clockrdlock(&l, bad_clocks[j], &abs);

		ck_assert_msg(rc == EINVAL, "%s with clock %s (%d) on a busy lock returned %s, expected EINVAL",
			      write ? "pthread_rwlock_clockwrlock" : "pthread_rwlock_clockrdlock",
			      clock_name(bad_clocks[j]), (int)bad_clocks[j], errname(rc));
	}
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}

START_TEST(clockrdlock_with_unsupported_clock_returns_einval)
{
	expect_einval_for_bad_clock(false);
}
END_TEST

START_TEST(clockwrlock_with_unsupported_clock_returns_einval)
{
	expect_einval_for_bad_clock(true);
}
END_TEST

static void expect_free_lock_taken_with_deadline(enum op op, struct timespec abs)
{
	pthread_rwlock_t l;
	int rc;

	init_default(&l);
	rc = op_abs(&l, op, &abs);
	ck_assert_msg(rc == 0, "%s on a free lock with deadline {%lld, %ld} returned %s, expected 0",
		      op_names[op], (long long)abs.tv_sec, abs.tv_nsec, errname(rc));
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	ck_assert_other(&l, OP_TRYRD, 0, op_is_write(op) ? EBUSY : 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}

static void expect_free_lock_taken_with_past_deadlines(const enum op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		expect_free_lock_taken_with_deadline(ops[i], (struct timespec){ 1, 0 });
		expect_free_lock_taken_with_deadline(ops[i], (struct timespec){ 0, 0 });
		expect_free_lock_taken_with_deadline(ops[i], ts_add_ms(ts_now(op_clock(ops[i])), -1000));
	}
}

START_TEST(timedrdlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_TIMEDRD }, 1);
}
END_TEST

START_TEST(clockrdlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_CLOCKRD_RT, OP_CLOCKRD_MONO }, 2);
}
END_TEST

START_TEST(timedwrlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_TIMEDWR }, 1);
}
END_TEST

START_TEST(clockwrlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2);
}
END_TEST

START_TEST(timedrdlock_on_read_held_lock_succeeds_with_past_deadline)
{
	pthread_rwlock_t l;
	struct holder h;
	struct timespec past = { 1, 0 };

	init_default(&l);
	holder_start(&h, &l, false);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++) {
		ck_assert_msg(op_abs(&l, rd_timed_ops[i], &past) == 0,
			      "%s with a past deadline on a read-held lock failed", op_names[rd_timed_ops[i]]);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	holder_stop(&h);
}
END_TEST

/* Contended lock, deadline given explicitly: must be ETIMEDOUT. */
static void expect_timeout_with_deadline(const enum op *ops, size_t n, bool holder_writes,
					 struct timespec abs)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		int rc = op_abs(&l, ops[i], &abs);

		ck_assert_msg(rc == ETIMEDOUT, "%s with deadline {%lld, %ld} on a lock held %s by another "
			      "thread returned %s, expected ETIMEDOUT", op_names[ops[i]],
			      (long long)abs.tv_sec, abs.tv_nsec,
			      holder_writes ? "for writing" : "for reading", errname(rc));
		if (rc == 0)
			pthread_rwlock_unlock(&l);
	}
	holder_stop(&h);
	/* usable afterwards */
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(timed_rdlocks_with_past_deadline_time_out_when_write_held)
{
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ 0, 0 });
}
END_TEST

START_TEST(timed_wrlocks_with_past_deadline_time_out_when_held)
{
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), true, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ 0, 0 });
}
END_TEST

START_TEST(timed_locks_with_negative_tv_sec_time_out_when_busy)
{
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ -1, 0 });
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ -1000, 500000000L });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ -1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), true, (struct timespec){ -1000, 999999999L });
}
END_TEST

/* A 50 ms deadline: ETIMEDOUT, not before the deadline, not much after. */
static void expect_short_timeout(const enum op *ops, size_t n, bool holder_writes)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		clockid_t c = op_clock(ops[i]);
		struct timespec start = ts_now(c);
		struct timespec abs = ts_add_ms(start, 50);
		int rc = op_abs(&l, ops[i], &abs);
		struct timespec end = ts_now(c);

		ck_assert_msg(rc == ETIMEDOUT, "%s with a 50 ms deadline on a lock held %s by another thread "
			      "returned %s, expected ETIMEDOUT", op_names[ops[i]],
			      holder_writes ? "for writing" : "for reading", errname(rc));
		ck_assert_msg(ts_diff_ns(end, abs) >= 0, "%s returned ETIMEDOUT %lld us before its deadline (%s)",
			      op_names[ops[i]], -ts_diff_ns(end, abs) / 1000, clock_name(c));
		ck_assert_msg(ts_diff_ns(end, start) < 2000000000LL,
			      "%s with a 50 ms deadline took %lld ms", op_names[ops[i]],
			      ts_diff_ns(end, start) / 1000000);
	}
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(timed_rdlocks_time_out_after_50ms_deadline_on_both_clocks)
{
	expect_short_timeout(rd_timed_ops, NELEM(rd_timed_ops), true);
}
END_TEST

START_TEST(timed_wrlocks_time_out_after_50ms_deadline_on_both_clocks)
{
	expect_short_timeout(wr_timed_ops, NELEM(wr_timed_ops), false);
	expect_short_timeout(wr_timed_ops, NELEM(wr_timed_ops), true);
}
END_TEST

/* A blocked timed reader gets the lock when the writer leaves in time. */
START_TEST(timed_rdlock_succeeds_when_writer_releases_before_deadline)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++) {
		struct waiter w;

		ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
		waiter_start(&w, &l, rd_timed_ops[i], 5000, false);
		waiter_expect_blocked(&w);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_waiter_gets_through(&w, 0, "timed reader after the writer left");
		waiter_release_and_join(&w);
	}
}
END_TEST

START_TEST(timed_wrlock_succeeds_when_reader_releases_before_deadline)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (size_t i = 0; i < NELEM(wr_timed_ops); i++) {
		struct waiter w;

		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
		waiter_start(&w, &l, wr_timed_ops[i], 5000, false);
		waiter_expect_blocked(&w);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_waiter_gets_through(&w, 0, "timed writer after the reader left");
		waiter_release_and_join(&w);
	}
}
END_TEST

/* After readers time out behind a writer, the next writer still gets in. */
START_TEST(writer_acquires_after_readers_time_out)
{
	pthread_rwlock_t l;
	struct holder h;
	struct waiter w;

	init_default(&l);
	holder_start(&h, &l, true);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++)
		ck_assert_rc(op_rel(&l, rd_timed_ops[i], 20), ETIMEDOUT);
	ck_assert_other(&l, OP_TIMEDRD, 20, ETIMEDOUT);
	holder_stop(&h);
	waiter_start(&w, &l, OP_WR, 0, false);
	ck_assert_waiter_gets_through(&w, 0, "writer after timed-out readers");
	waiter_release_and_join(&w);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

/* After a writer times out behind readers, new readers and writers get in. */
static void check_reader_acquires_after_writer_times_out(pthread_rwlock_t *l)
{
	struct holder h;
	struct waiter r, w;

	holder_start(&h, l, false);
	for (size_t i = 0; i < NELEM(wr_timed_ops); i++)
		ck_assert_rc(op_rel(l, wr_timed_ops[i], 20), ETIMEDOUT);
	ck_assert_other(l, OP_TIMEDWR, 20, ETIMEDOUT);
	/* the writer is gone: a new reader must not wait for it */
	waiter_start(&r, l, OP_RD, 0, false);
	ck_assert_waiter_gets_through(&r, 0, "new reader after a writer timed out");
	waiter_release_and_join(&r);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	holder_stop(&h);
	waiter_start(&w, l, OP_WR, 0, false);
	ck_assert_waiter_gets_through(&w, 0, "writer after the readers left");
	waiter_release_and_join(&w);
}

START_TEST(reader_acquires_after_writer_times_out)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_reader_acquires_after_writer_times_out(&l);
}
END_TEST

START_TEST(reader_acquires_after_writer_times_out_on_prefer_writer_lock)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_reader_acquires_after_writer_times_out(&l);
}
END_TEST

/* Timed waiters come and go while others block: no wake-up gets lost. */
struct timed_churn {
	pthread_rwlock_t *lock;
	enum op op;
	int bad_rc;
};

static void *timed_churn_main(void *p)
{
	struct timed_churn *t = p;

	for (int i = 0; i < 5; i++) {
		int rc = op_rel(t->lock, t->op, 20 + 7 * i);

		if (rc != ETIMEDOUT) {
			t->bad_rc = rc ? rc : -1;
			if (rc == 0)
				pthread_rwlock_unlock(t->lock);
			break;
		}
	}
	return NULL;
}

static void check_blocked_waiters_acquire_after_timeouts(pthread_rwlock_t *l, bool holder_writes)
{
	enum op churn_ops[] = { OP_TIMEDRD, OP_CLOCKRD_MONO, OP_TIMEDWR, OP_CLOCKWR_MONO, OP_CLOCKWR_RT };
	struct timed_churn tc[NELEM(churn_ops)];
	pthread_t tth[NELEM(churn_ops)];
	struct waiter w[4];
	enum op wops[4] = { OP_RD, OP_WR, OP_RD, OP_WR };
	struct holder h;
	size_t nw = 0;

	holder_start(&h, l, holder_writes);
	for (size_t i = 0; i < NELEM(wops); i++) {
		if (!holder_writes && !op_is_write(wops[i]))
			continue; /* would get in beside the reading holder */
		waiter_start(&w[nw], l, wops[i], 0, false);
		waiter_expect_blocked(&w[nw]);
		nw++;
	}
	for (size_t i = 0; i < NELEM(churn_ops); i++) {
		tc[i] = (struct timed_churn){ .lock = l, .op = churn_ops[i] };
		if (!holder_writes && !op_is_write(churn_ops[i]))
			tc[i].op = OP_CLOCKWR_RT; /* a reader may join the reading holder */
		ck_assert_rc(pthread_create(&tth[i], NULL, timed_churn_main, &tc[i]), 0);
	}
	for (size_t i = 0; i < NELEM(churn_ops); i++) {
		ck_assert_rc(pthread_join(tth[i], NULL), 0);
		ck_assert_msg(tc[i].bad_rc == 0, "timed waiter %s returned %s while the lock was held "
			      "(and others waited), expected ETIMEDOUT", op_names[tc[i].op],
			      tc[i].bad_rc == -1 ? "0" : errname(tc[i].bad_rc));
	}
	for (size_t i = 0; i < nw; i++)
		ck_assert_msg(!atomic_load(&w[i].done), "%s got through while the lock was held",
			      op_names[w[i].op]);
	holder_stop(&h);
	for (size_t i = 0; i < nw; i++) {
		ck_assert_waiter_gets_through(&w[i], 0, "blocked waiter after other waiters timed out");
		waiter_release_and_join(&w[i]);
	}
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
}

START_TEST(blocked_waiters_acquire_after_timed_waiters_give_up_on_write_held_lock)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, true);
}
END_TEST

START_TEST(blocked_writers_acquire_after_timed_waiters_give_up_on_read_held_lock)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, false);
}
END_TEST

START_TEST(blocked_waiters_acquire_after_timed_waiters_give_up_on_prefer_writer_lock)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, true);
	check_blocked_waiters_acquire_after_timeouts(&l, false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_timed_tests(TCase *tc)
{
	tcase_add_test(tc, timed_locks_with_invalid_nsec_return_einval_even_on_a_free_lock);
	tcase_add_test(tc, timedrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, timedwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockrdlock_with_unsupported_clock_returns_einval);
	tcase_add_test(tc, clockwrlock_with_unsupported_clock_returns_einval);
	tcase_add_test(tc, timedrdlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, clockrdlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timedwrlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, clockwrlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timedrdlock_on_read_held_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timed_rdlocks_with_past_deadline_time_out_when_write_held);
	tcase_add_test(tc, timed_wrlocks_with_past_deadline_time_out_when_held);
	tcase_add_test(tc, timed_locks_with_negative_tv_sec_time_out_when_busy);
	tcase_add_test(tc, timed_rdlocks_time_out_after_50ms_deadline_on_both_clocks);
	tcase_add_test(tc, timed_wrlocks_time_out_after_50ms_deadline_on_both_clocks);
	tcase_add_test(tc, timed_rdlock_succeeds_when_writer_releases_before_deadline);
	tcase_add_test(tc, timed_wrlock_succeeds_when_reader_releases_before_deadline);
	tcase_add_test(tc, writer_acquires_after_readers_time_out);
	tcase_add_test(tc, reader_acquires_after_writer_times_out);
	tcase_add_test(tc, reader_acquires_after_writer_times_out_on_prefer_writer_lock);
	tcase_add_test(tc, blocked_waiters_acquire_after_timed_waiters_give_up_on_write_held_lock);
	tcase_add_test(tc, blocked_writers_acquire_after_timed_waiters_give_up_on_read_held_lock);
	tcase_add_test(tc, blocked_waiters_acquire_after_timed_waiters_give_up_on_prefer_writer_lock);
}
