/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cancel_exit.c - threads that are cancelled, or exit, while they hold or
 * wait for rwlocks.
 *
 * POSIX: the pthread_rwlock_* functions are not cancellation points, so a
 * cancellation request sent to a thread blocked in one takes effect only at
 * the thread's next cancellation point, after the call returned; a thread
 * cancelled while it holds a lock releases it only through a cleanup
 * handler.  A thread that exits holding a read lock leaves the lock
 * read-held (glibc's behaviour, and libbravo(7), NOTES).
 */
#include "torture.h"

enum op { RD, TIMEDRD, CLOCKRD, TRYRD, WR, TIMEDWR, CLOCKWR, TRYWR, NOPS };

static const char *const op_name[NOPS] = {
	"rdlock", "timedrdlock", "clockrdlock", "tryrdlock",
	"wrlock", "timedwrlock", "clockwrlock", "trywrlock",
};

static bool op_writes(enum op op)
{
	return op >= WR;
}

/* Take l with op; timed forms get a deadline 60 s away, try forms retry. */
static int take(pthread_rwlock_t *l, enum op op)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 60000);
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 60000);
	int rc;

	switch (op) {
	case RD: return pthread_rwlock_rdlock(l);
	case TIMEDRD: return pthread_rwlock_timedrdlock(l, &rt);
	case CLOCKRD: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &mono);
	case WR: return pthread_rwlock_wrlock(l);
	case TIMEDWR: return pthread_rwlock_timedwrlock(l, &rt);
	case CLOCKWR: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono);
	case TRYRD:
	case TRYWR:
		while ((rc = op == TRYRD ? pthread_rwlock_tryrdlock(l) : pthread_rwlock_trywrlock(l)) == EBUSY)
			sleep_ms(1);
		return rc;
	default:
		return EINVAL;
	}
}

/* Sleep at a cancellation point until cancelled (at most a minute). */
static void sleep_until_cancelled(void)
{
	for (int i = 0; i < 600; i++) {
		struct timespec t = { 0, 100000000L };

		nanosleep(&t, NULL); /* a cancellation point */
	}
	torture_fail(__FILE__, __LINE__, "a thread was never cancelled");
}

/* ---- holders cancelled at a cancellation point ---- */

struct holder {
	pthread_rwlock_t *lock;
	enum op op;
	atomic_int *holding;
	atomic_int released;
};

static void holder_cleanup(void *arg)
{
	struct holder *h = arg;

	CHECK_RC(pthread_rwlock_unlock(h->lock), 0);
	atomic_store(&h->released, 1);
}

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	CHECK_RC(take(h->lock, h->op), 0);
	pthread_cleanup_push(holder_cleanup, h);
	atomic_fetch_add(h->holding, 1);
	sleep_until_cancelled();
	pthread_cleanup_pop(0);
	return NULL;
}

struct contender {
	pthread_rwlock_t *lock;
	struct guarded *g;
	enum op op;
	atomic_int done;
};

static void *contender_main(void *arg)
{
	struct contender *c = arg;

	CHECK_RC(take(c->lock, c->op), 0);
	if (op_writes(c->op)) {
		guarded_write_enter(c->g);
		guarded_write_update(c->g, true);
		guarded_write_leave(c->g);
	} else {
		guarded_read_enter(c->g);
		guarded_read_check(c->g);
		guarded_read_leave(c->g);
	}
	CHECK_RC(pthread_rwlock_unlock(c->lock), 0);
	atomic_store(&c->done, 1);
	return NULL;
}

/*
 * Eight readers hold lock r and one writer holds lock w, each parked at a
 * cancellation point with a cleanup handler that unlocks; writers wait on
 * r and readers on w.  Cancelling the holders must release both locks to
 * the waiters, whatever call took them.
 */
static void holders_cancelled_at_a_cancellation_point_release_through_cleanup_handlers(void)
{
	enum { READERS = 8, WAITERS = 4 };
	pthread_rwlock_t r, w;
	struct guarded gr, gw;
	atomic_int holding = 0;
	struct holder h[READERS + 1];
	struct contender c[2 * WAITERS];
	pthread_t hth[READERS + 1], cth[2 * WAITERS];
	static const enum op rd_ops[] = { RD, TIMEDRD, CLOCKRD, TRYRD };
	static const enum op wr_ops[] = { WR, TIMEDWR, CLOCKWR, TRYWR };

	for (long round = 0; round < 4 * torture_scale(); round++) {
		CHECK_RC(pthread_rwlock_init(&r, NULL), 0);
		CHECK_RC(pthread_rwlock_init(&w, NULL), 0);
		memset(&gr, 0, sizeof(gr));
		memset(&gw, 0, sizeof(gw));
		atomic_store(&holding, 0);
		for (int i = 0; i <= READERS; i++) {
			h[i] = (struct holder){ .lock = i < READERS ? &r : &w,
						.op = i < READERS ? rd_ops[i % 4] : wr_ops[round % 4],
						.holding = &holding };
			hth[i] = spawn(holder_main, &h[i]);
		}
		CHECK(wait_for(&holding, READERS + 1, 10000), "the holders did not all get their locks");
		for (int i = 0; i < 2 * WAITERS; i++) {
			c[i] = (struct contender){ .lock = i < WAITERS ? &r : &w, .g = i < WAITERS ? &gr : &gw,
						   .op = i < WAITERS ? wr_ops[i % 4] : rd_ops[i % 4] };
			cth[i] = spawn(contender_main, &c[i]);
		}
		sleep_ms(20);
		for (int i = 0; i < 2 * WAITERS; i++)
			CHECK(!atomic_load(&c[i].done), "%s got lock %s while it was held by another thread",
			      op_name[c[i].op], i < WAITERS ? "r (read-held)" : "w (write-held)");
		for (int i = 0; i <= READERS; i++)
			CHECK_RC(pthread_cancel(hth[i]), 0);
		for (int i = 0; i <= READERS; i++) {
			CHECK(join(hth[i]) == PTHREAD_CANCELED, "a holder was not cancelled");
			CHECK(atomic_load(&h[i].released), "a holder's cleanup handler did not run");
		}
		for (int i = 0; i < 2 * WAITERS; i++)
			join(cth[i]);
		check_lock_still_works(&r, 4, 100);
		check_lock_still_works(&w, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&r), 0);
		CHECK_RC(pthread_rwlock_destroy(&w), 0);
	}
}

/* ---- a cancellation request while blocked in a lock call ---- */

struct blocked {
	pthread_rwlock_t *lock;
	enum op op;
	atomic_int started;
	atomic_int rc;          /* what the lock call returned, -1 before */
	atomic_int cleaned_up;  /* the cleanup handler ran */
	atomic_int past_cancel; /* testcancel returned: the request was lost */
};

static void blocked_cleanup(void *arg)
{
	struct blocked *b = arg;

	/* Cancelled inside the lock call (not a cancellation point)? */
	CHECK(atomic_load(&b->rc) != -1, "%s acted on a cancellation request before it returned",
	      op_name[b->op]);
	if (atomic_load(&b->rc) == 0)
		CHECK_RC(pthread_rwlock_unlock(b->lock), 0);
	atomic_store(&b->cleaned_up, 1);
}

static void *blocked_main(void *arg)
{
	struct blocked *b = arg;

	pthread_cleanup_push(blocked_cleanup, b);
	atomic_store(&b->started, 1);
	atomic_store(&b->rc, take(b->lock, b->op));
	pthread_testcancel();
	atomic_store(&b->past_cancel, 1);
	pthread_cleanup_pop(1);
	return NULL;
}

/*
 * Readers block on a write-held lock and writers on a read-held one, in
 * each blocking call; all get a cancellation request while blocked.  None
 * may act on it inside the lock call: each gets its lock when the holder
 * leaves, returns 0, and is cancelled at the pthread_testcancel() after
 * it, where its cleanup handler unlocks.
 */
static void cancel_request_during_a_blocked_lock_call_acts_at_the_next_cancellation_point(void)
{
	static const enum op ops[] = { RD, TIMEDRD, CLOCKRD, WR, TIMEDWR, CLOCKWR };
	enum { PER_OP = 3, N = NELEM(ops) * PER_OP };
	pthread_rwlock_t wheld, rheld;
	struct blocked b[N];
	pthread_t th[N];

	for (long round = 0; round < 2 * torture_scale(); round++) {
		CHECK_RC(pthread_rwlock_init(&wheld, NULL), 0);
		CHECK_RC(pthread_rwlock_init(&rheld, NULL), 0);
		CHECK_RC(pthread_rwlock_wrlock(&wheld), 0);
		CHECK_RC(pthread_rwlock_rdlock(&rheld), 0);
		for (int i = 0; i < N; i++) {
			enum op op = ops[i % NELEM(ops)];

			b[i] = (struct blocked){ .lock = op_writes(op) ? &rheld : &wheld, .op = op, .rc = -1 };
			th[i] = spawn(blocked_main, &b[i]);
		}
		for (int i = 0; i < N; i++)
			CHECK(wait_for(&b[i].started, 1, 10000), "a waiter did not start");
		sleep_ms(20); /* let them block */
		for (int i = 0; i < N; i++)
			CHECK_RC(pthread_cancel(th[i]), 0);
		sleep_ms(30);
		for (int i = 0; i < N; i++)
			CHECK(atomic_load(&b[i].rc) == -1, "%s returned %s while the lock was held",
			      op_name[b[i].op], errname(atomic_load(&b[i].rc)));
		CHECK_RC(pthread_rwlock_unlock(&wheld), 0);
		CHECK_RC(pthread_rwlock_unlock(&rheld), 0);
		for (int i = 0; i < N; i++) {
			CHECK(join(th[i]) == PTHREAD_CANCELED, "%s: the thread was not cancelled",
			      op_name[b[i].op]);
			CHECK(atomic_load(&b[i].rc) == 0, "%s returned %s after a cancellation request",
			      op_name[b[i].op], errname(atomic_load(&b[i].rc)));
			CHECK(atomic_load(&b[i].cleaned_up) && !atomic_load(&b[i].past_cancel),
			      "%s: the cancellation did not act at pthread_testcancel()", op_name[b[i].op]);
		}
		check_lock_still_works(&wheld, 4, 100);
		check_lock_still_works(&rheld, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&wheld), 0);
		CHECK_RC(pthread_rwlock_destroy(&rheld), 0);
	}
}

/* ---- threads that leave while holding a read lock ---- */

enum { DEAD_LOCKS = 4 };

static pthread_rwlock_t dead_locks[DEAD_LOCKS];

struct leaver {
	bool cancel;            /* be cancelled (no cleanup handler) instead of exiting */
	atomic_int *holding;
};

static void *leaver_main(void *arg)
{
	struct leaver *lv = arg;

	for (int k = 0; k < DEAD_LOCKS; k++)
		CHECK_RC(take(&dead_locks[k], k % 2 ? RD : TRYRD), 0);
	atomic_fetch_add(lv->holding, 1);
	if (lv->cancel)
		sleep_until_cancelled();
	return NULL; /* exits holding every lock for reading */
}

static void *check_reader_gets_in(void *arg)
{
	pthread_rwlock_t *l = arg;

	CHECK_RC(pthread_rwlock_tryrdlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	return NULL;
}

/* The locks were left read-held by threads that are gone. */
static void check_left_read_held(void)
{
	for (int k = 0; k < DEAD_LOCKS; k++) {
		pthread_rwlock_t *l = &dead_locks[k];
		struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 20);
		struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 20);
		pthread_t th[4];

		CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
		CHECK_RC(pthread_rwlock_timedwrlock(l, &rt), ETIMEDOUT);
		CHECK_RC(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono), ETIMEDOUT);
		/* readers still get in (the writers that timed out left no trace) */
		for (int i = 0; i < 4; i++)
			th[i] = spawn(check_reader_gets_in, l);
		for (int i = 0; i < 4; i++)
			join(th[i]);
		check_reader_gets_in(l);
		CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
	}
}

static void leave_locks_read_held(bool cancel)
{
	enum { LEAVERS = 8 };
	struct leaver lv[LEAVERS];
	pthread_t th[LEAVERS];
	atomic_int holding = 0;

	for (int k = 0; k < DEAD_LOCKS; k++) {
		CHECK_RC(pthread_rwlock_init(&dead_locks[k], NULL), 0);
		/* warm up: a lock read before (BRAVO's readers then take the fast path) */
		for (int i = 0; i < 3; i++) {
			CHECK_RC(pthread_rwlock_rdlock(&dead_locks[k]), 0);
			CHECK_RC(pthread_rwlock_unlock(&dead_locks[k]), 0);
		}
	}
	for (int i = 0; i < LEAVERS; i++) {
		lv[i] = (struct leaver){ .cancel = cancel, .holding = &holding };
		th[i] = spawn(leaver_main, &lv[i]);
	}
	CHECK(wait_for(&holding, LEAVERS, 10000), "the readers did not all get their locks");
	for (int i = 0; i < LEAVERS; i++) {
		if (cancel)
			CHECK_RC(pthread_cancel(th[i]), 0);
		CHECK(join(th[i]) == (cancel ? PTHREAD_CANCELED : NULL), "a reader did not %s",
		      cancel ? "get cancelled" : "exit");
	}
	check_left_read_held();
}

static void thread_exiting_with_a_read_lock_leaves_the_lock_read_held(void)
{
	leave_locks_read_held(false);
}

static void thread_cancelled_with_a_read_lock_and_no_cleanup_leaves_the_lock_read_held(void)
{
	leave_locks_read_held(true);
}

/* Default mode, as glibc: destroy returns 0 and the lock stays read-held. */
static void destroy_of_a_lock_left_read_held_by_an_exited_thread_returns_0_and_it_stays_read_held(void)
{
	leave_locks_read_held(false);
	for (int k = 0; k < DEAD_LOCKS; k++)
		CHECK_RC(pthread_rwlock_destroy(&dead_locks[k]), 0);
	check_left_read_held();
}

/* Strict mode: destroy of a lock held (by anyone) returns EBUSY. */
static void destroy_of_a_lock_left_read_held_by_an_exited_thread_returns_ebusy(void)
{
	leave_locks_read_held(false);
	for (int k = 0; k < DEAD_LOCKS; k++)
		CHECK_RC(pthread_rwlock_destroy(&dead_locks[k]), EBUSY);
	check_left_read_held();
}

/* ---- thread-specific data destructors that unlock ---- */

enum { TSD_LOCKS = 20 };

static pthread_rwlock_t tsd_locks[TSD_LOCKS];
static atomic_int tsd_unlock_errors;
static atomic_int tsd_last_error;

/* At thread exit: release every lock the thread still holds. */
static void tsd_release(void *arg)
{
	(void)arg;
	for (int i = 0; i < TSD_LOCKS; i++) {
		int rc = pthread_rwlock_unlock(&tsd_locks[i]);

		if (rc) {
			atomic_fetch_add(&tsd_unlock_errors, 1);
			atomic_store(&tsd_last_error, rc);
		}
	}
}

struct tsd_thread {
	pthread_key_t key;
	bool write;
};

static void *tsd_main(void *arg)
{
	struct tsd_thread *t = arg;

	for (int i = 0; i < TSD_LOCKS; i++)
		CHECK_RC(t->write ? pthread_rwlock_wrlock(&tsd_locks[i]) : pthread_rwlock_rdlock(&tsd_locks[i]), 0);
	CHECK_RC(pthread_setspecific(t->key, t), 0);
	return NULL; /* tsd_release unlocks */
}

/* A thread that holds many locks at once (and releases them). */
static void *many_locks_main(void *arg)
{
	pthread_rwlock_t l[TSD_LOCKS];

	(void)arg;
	for (int i = 0; i < TSD_LOCKS; i++) {
		CHECK_RC(pthread_rwlock_init(&l[i], NULL), 0);
		CHECK_RC(pthread_rwlock_rdlock(&l[i]), 0);
	}
	for (int i = 0; i < TSD_LOCKS; i++) {
		CHECK_RC(pthread_rwlock_unlock(&l[i]), 0);
		CHECK_RC(pthread_rwlock_destroy(&l[i]), 0);
	}
	return NULL;
}

/*
 * A thread holding 20 locks (read, then write) exits; a destructor of its
 * thread-specific data (pthread_key_create) releases them.  Keys are
 * created both before and after another thread held many locks at once
 * (an implementation may set up per-thread data of its own then, and
 * destructors run in key order): the unlocks succeed and the locks are
 * free afterwards.
 */
static void thread_specific_data_destructor_releases_the_locks_its_thread_holds(void)
{
	struct tsd_thread t[2];

	/* keys stay until the end, so the second one is made after the first thread */
	for (int order = 0; order < 2; order++) {
		CHECK_RC(pthread_key_create(&t[order].key, tsd_release), 0);
		join(spawn(many_locks_main, NULL));
		for (int write = 0; write < 2; write++) {
			for (int i = 0; i < TSD_LOCKS; i++)
				CHECK_RC(pthread_rwlock_init(&tsd_locks[i], NULL), 0);
			atomic_store(&tsd_unlock_errors, 0);
			t[order].write = write;
			join(spawn(tsd_main, &t[order]));
			CHECK(atomic_load(&tsd_unlock_errors) == 0,
			      "%d of %d unlocks (%s) in a thread-specific data destructor failed (%s)",
			      atomic_load(&tsd_unlock_errors), TSD_LOCKS, write ? "write" : "read",
			      errname(atomic_load(&tsd_last_error)));
			for (int i = 0; i < TSD_LOCKS; i++) {
				CHECK_RC(pthread_rwlock_trywrlock(&tsd_locks[i]), 0);
				CHECK_RC(pthread_rwlock_unlock(&tsd_locks[i]), 0);
				CHECK_RC(pthread_rwlock_destroy(&tsd_locks[i]), 0);
			}
		}
	}
	CHECK_RC(pthread_key_delete(t[0].key), 0);
	CHECK_RC(pthread_key_delete(t[1].key), 0);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(holders_cancelled_at_a_cancellation_point_release_through_cleanup_handlers),
		TORTURE_CHECK(cancel_request_during_a_blocked_lock_call_acts_at_the_next_cancellation_point),
		TORTURE_CHECK(thread_exiting_with_a_read_lock_leaves_the_lock_read_held),
		TORTURE_CHECK(thread_cancelled_with_a_read_lock_and_no_cleanup_leaves_the_lock_read_held),
		DEFAULT_CHECK(destroy_of_a_lock_left_read_held_by_an_exited_thread_returns_0_and_it_stays_read_held),
		STRICT_CHECK(destroy_of_a_lock_left_read_held_by_an_exited_thread_returns_ebusy),
		TORTURE_CHECK(thread_specific_data_destructor_releases_the_locks_its_thread_holds),
	};

	return torture_main("cancel_exit", "cancellation and thread exit while holding or waiting for rwlocks",
			    checks, NELEM(checks), argc, argv);
}
