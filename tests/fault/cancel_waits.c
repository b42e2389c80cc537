/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cancel_waits.c - cancellation requests sent to threads that wait inside
 * rwlock calls, at each kind of wait a lock call has.
 *
 * glibc's pthread_rwlock_* functions are not cancellation points (POSIX
 * does not list them), so a deferred cancellation request sent to a
 * thread blocked in one takes effect only after the call returned, at the
 * thread's next cancellation point.  An implementation whose lock calls
 * sleep in a function that is a cancellation point (nanosleep,
 * clock_nanosleep, poll...) is killed inside the call instead, with the
 * lock half-taken: BRAVO's writer, waiting for the readers that hold the
 * lock through the fast path to leave (the revocation), polls with
 * clock_nanosleep.  Each check here blocks one thread in one lock function
 * at one kind of wait, on the default kind and on the writer-preferring
 * kind (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP):
 *
 *   - wrlock, timedwrlock, clockwrlock waiting for a fast-path reader
 *     (the reader warmed the lock with a few read pairs, so that bias is
 *     on, then holds it): the revocation wait;
 *   - timedwrlock waiting there past its deadline (ETIMEDOUT);
 *   - rdlock, timedrdlock, clockrdlock, and wrlock, timedwrlock,
 *     clockwrlock, behind a writer (a futex wait).
 *
 * Once the thread sleeps in the call (task_state), it gets a cancellation
 * request (deferred, the default), and after a while what blocks it goes
 * away: the call must return normally (0, or ETIMEDOUT for a deadline that
 * passed), the thread records that, unlocks, and is cancelled at its own
 * pthread_testcancel() (pthread_join gives PTHREAD_CANCELED); the lock is
 * free afterwards, a reader and a writer get in (with a deadline: a lock
 * left half-taken fails by name, not by a hang), and it still works.
 *
 * Last, asynchronous cancellation where glibc defines it: a thread with
 * PTHREAD_CANCEL_ASYNCHRONOUS that is cancelled while it spins in its own
 * loop, holding nothing, between lock calls made with cancellation
 * deferred; the locks it used work afterwards.
 */
#include "fault.h"

enum op { RD, TIMEDRD, CLOCKRD, WR, TIMEDWR, CLOCKWR, NOPS };

static const char *const op_name[NOPS] = {
	"rdlock", "timedrdlock", "clockrdlock", "wrlock", "timedwrlock", "clockwrlock",
};

static bool op_writes(enum op op)
{
	return op >= WR;
}

static clockid_t op_clock(enum op op)
{
	return op == CLOCKRD || op == CLOCKWR ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static int do_op(pthread_rwlock_t *l, enum op op, const struct timespec *abs)
{
	switch (op) {
	case RD: return pthread_rwlock_rdlock(l);
	case TIMEDRD: return pthread_rwlock_timedrdlock(l, abs);
	case CLOCKRD: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, abs);
	case WR: return pthread_rwlock_wrlock(l);
	case TIMEDWR: return pthread_rwlock_timedwrlock(l, abs);
	default: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, abs);
	}
}

static const char *kind_name(bool prefer_writer)
{
	return prefer_writer ? "writer-preferring lock" : "default lock";
}

/* ---- readers that hold the lock through the fast path ---- */

/*
 * One reader: BRAVO's table has one slot per lock and CPU, so a second
 * reader on the same CPU would find it taken and read through the lock
 * itself (then the writer waits for it there, not in the revocation).
 */
enum { FAST_READERS = 1, WARM_PAIRS = 4 };

struct fast_reader {
	pthread_rwlock_t *lock;
	struct guarded *g;
	atomic_int *holding;
	atomic_int *release;
};

static void *fast_reader_main(void *arg)
{
	struct fast_reader *r = arg;

	/* Warm the lock on this thread: BRAVO turns bias on after a read. */
	for (int i = 0; i < WARM_PAIRS; i++) {
		CHECK_RC(pthread_rwlock_rdlock(r->lock), 0);
		CHECK_RC(pthread_rwlock_unlock(r->lock), 0);
	}
	CHECK_RC(pthread_rwlock_rdlock(r->lock), 0);
	guarded_read_enter(r->g);
	atomic_fetch_add(r->holding, 1);
	while (!atomic_load(r->release)) {
		guarded_read_check(r->g);
		sleep_ms(1);
	}
	guarded_read_leave(r->g);
	CHECK_RC(pthread_rwlock_unlock(r->lock), 0);
	return NULL;
}

/* ---- the thread that waits in a lock call and gets cancelled ---- */

struct waiter {
	pthread_rwlock_t *lock;
	struct guarded *g;
	enum op op;
	long timeout_ms;           /* the deadline of the timed forms, from the call */
	atomic_int tid;
	atomic_int started;        /* about to call */
	atomic_int rc;             /* what the call returned; -1 before */
	atomic_int cleanup_ran;    /* its cancellation cleanup handler ran */
	atomic_int rc_at_cleanup;  /* rc when it ran: -1 means inside the call */
	atomic_int past_testcancel; /* pthread_testcancel returned: request lost */
};

static void waiter_cleanup(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->rc_at_cleanup, atomic_load(&w->rc));
	atomic_store(&w->cleanup_ran, 1);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct timespec abs = ts_add_ms(ts_now(op_clock(w->op)), w->timeout_ms);
	int rc;

	pthread_cleanup_push(waiter_cleanup, w);
	atomic_store(&w->tid, (int)gettid());
	atomic_store(&w->started, 1);
	rc = do_op(w->lock, w->op, &abs);
	atomic_store(&w->rc, rc);
	if (rc == 0) {
		if (op_writes(w->op)) {
			guarded_write_enter(w->g);
			guarded_write_update(w->g, true);
			guarded_write_leave(w->g);
		} else {
			guarded_read_enter(w->g);
			guarded_read_check(w->g);
			guarded_read_leave(w->g);
		}
		CHECK_RC(pthread_rwlock_unlock(w->lock), 0);
	}
	pthread_testcancel(); /* its own cancellation point: the request acts here */
	atomic_store(&w->past_testcancel, 1);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Poll (1 ms) until thread tid sleeps (state S), at most 10 s. */
static void wait_until_asleep(pid_t tid, const char *what)
{
	for (int i = 0; i < 10000; i++) {
		if (task_state(tid) == 'S')
			return;
		sleep_ms(1);
	}
	torture_fail(__FILE__, __LINE__, "%s never went to sleep in the call (state %c)", what,
		     task_state(tid));
}

/* A fresh thread: timed read, then timed write, with 2 s deadlines. */
static void *fresh_user_main(void *arg)
{
	pthread_rwlock_t *l = arg;
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 2000);
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 2000);

	CHECK_RC(pthread_rwlock_timedrdlock(l, &rt), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	return NULL;
}

/* The lock is free and works: readers and writers get in, from other threads. */
static void check_lock_free_after(pthread_rwlock_t *l)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 2000);
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		th[i] = spawn(fresh_user_main, l);
	for (int i = 0; i < 2; i++)
		join(th[i]);
	CHECK_RC(pthread_rwlock_timedwrlock(l, &rt), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	check_lock_still_works(l, 4, 100);
}

enum blocker {
	FAST_PATH_READERS, /* readers hold the lock through BRAVO's fast path */
	A_WRITER,          /* the main thread holds the lock for writing */
};

/*
 * Block a thread in op on a lock of the given kind held by blocker, cancel
 * it once it sleeps in the call, release after 20 ms; check as described
 * at the top.  timeout_ms: the deadline of a timed op (60 s: never passes;
 * short: passes while the lock is still held, and the call must return
 * ETIMEDOUT before the release).
 */
static void cancel_during_wait(enum op op, bool prefer_writer, enum blocker blocker, long timeout_ms)
{
	pthread_rwlock_t l;
	struct guarded g;
	atomic_int holding = 0, release = 0;
	struct fast_reader fr[FAST_READERS];
	pthread_t rth[FAST_READERS] = { 0 }, wth;
	struct waiter w;
	char what[160];
	bool expect_timeout = timeout_ms < 60000;
	int rc;

	snprintf(what, sizeof(what), "%s on a %s held by %s", op_name[op], kind_name(prefer_writer),
		 blocker == FAST_PATH_READERS ? "fast-path readers" : "a writer");
	fault_watchdog(10, what);
	memset(&g, 0, sizeof(g));
	init_lock_of_kind(&l, prefer_writer);
	if (blocker == FAST_PATH_READERS) {
		for (int i = 0; i < FAST_READERS; i++) {
			fr[i] = (struct fast_reader){ .lock = &l, .g = &g, .holding = &holding,
						      .release = &release };
			rth[i] = spawn(fast_reader_main, &fr[i]);
		}
		CHECK(wait_for(&holding, FAST_READERS, 5000), "the readers did not get the lock");
	} else {
		CHECK_RC(pthread_rwlock_wrlock(&l), 0);
		guarded_write_enter(&g);
	}

	w = (struct waiter){ .lock = &l, .g = &g, .op = op, .timeout_ms = timeout_ms, .rc = -1,
			     .rc_at_cleanup = -2 };
	wth = spawn(waiter_main, &w);
	CHECK(wait_for(&w.started, 1, 5000), "the waiter did not start");
	wait_until_asleep(atomic_load(&w.tid), what);
	CHECK_RC(pthread_cancel(wth), 0);
	if (expect_timeout) {
		/* the deadline passes while the lock is still held */
		for (int i = 0; i < 5000 && atomic_load(&w.rc) == -1 && !atomic_load(&w.cleanup_ran); i++)
			sleep_ms(1);
	} else {
		sleep_ms(20);
	}
	CHECK(!atomic_load(&w.cleanup_ran) || atomic_load(&w.rc_at_cleanup) != -1,
	      "%s: the thread acted on a deferred cancellation request inside the call "
	      "(it was cancelled before the call returned)", what);
	rc = atomic_load(&w.rc);
	if (expect_timeout)
		CHECK(rc == ETIMEDOUT, "%s: returned %s with its deadline passed, expected ETIMEDOUT",
		      what, errname(rc));
	else
		CHECK(rc == -1, "%s: returned %s while the lock was held", what, errname(rc));

	/* release what blocks it */
	if (blocker == FAST_PATH_READERS) {
		atomic_store(&release, 1);
		for (int i = 0; i < FAST_READERS; i++)
			join(rth[i]);
	} else {
		guarded_write_update(&g, false);
		guarded_write_leave(&g);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
	}
	CHECK(join(wth) == PTHREAD_CANCELED, "%s: the thread was not cancelled", what);
	CHECK(atomic_load(&w.rc_at_cleanup) != -1,
	      "%s: the thread was cancelled inside the call, before it returned", what);
	rc = atomic_load(&w.rc);
	CHECK(rc == (expect_timeout ? ETIMEDOUT : 0), "%s returned %s after a cancellation request, "
	      "expected %s", what, errname(rc), expect_timeout ? "ETIMEDOUT" : "0");
	CHECK(atomic_load(&w.cleanup_ran) && !atomic_load(&w.past_testcancel),
	      "%s: the cancellation did not act at the thread's pthread_testcancel()", what);
	check_lock_free_after(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	fault_watchdog(0, NULL);
}

/* ---- the revocation wait: writers behind fast-path readers ---- */

static void cancel_request_to_wrlock_waiting_for_fast_path_readers_acts_after_it_returns(void)
{
	cancel_during_wait(WR, false, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_timedwrlock_waiting_for_fast_path_readers_acts_after_it_returns(void)
{
	cancel_during_wait(TIMEDWR, false, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_clockwrlock_waiting_for_fast_path_readers_acts_after_it_returns(void)
{
	cancel_during_wait(CLOCKWR, false, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_wrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns(void)
{
	cancel_during_wait(WR, true, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_timedwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns(void)
{
	cancel_during_wait(TIMEDWR, true, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_clockwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns(void)
{
	cancel_during_wait(CLOCKWR, true, FAST_PATH_READERS, 60000);
}

static void cancel_request_to_timedwrlock_waiting_for_fast_path_readers_past_its_deadline_acts_after_etimedout(void)
{
	cancel_during_wait(TIMEDWR, false, FAST_PATH_READERS, 50);
}

static void cancel_request_to_clockwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_past_its_deadline_acts_after_etimedout(void)
{
	cancel_during_wait(CLOCKWR, true, FAST_PATH_READERS, 50);
}

/* ---- futex waits: readers and writers behind a writer ---- */

static void cancel_request_to_rdlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(RD, false, A_WRITER, 60000);
	cancel_during_wait(RD, true, A_WRITER, 60000);
}

static void cancel_request_to_timedrdlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(TIMEDRD, false, A_WRITER, 60000);
	cancel_during_wait(TIMEDRD, true, A_WRITER, 60000);
}

static void cancel_request_to_clockrdlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(CLOCKRD, false, A_WRITER, 60000);
	cancel_during_wait(CLOCKRD, true, A_WRITER, 60000);
}

static void cancel_request_to_wrlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(WR, false, A_WRITER, 60000);
	cancel_during_wait(WR, true, A_WRITER, 60000);
}

static void cancel_request_to_timedwrlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(TIMEDWR, false, A_WRITER, 60000);
	cancel_during_wait(TIMEDWR, true, A_WRITER, 60000);
}

static void cancel_request_to_clockwrlock_behind_a_writer_acts_after_it_returns(void)
{
	cancel_during_wait(CLOCKWR, false, A_WRITER, 60000);
	cancel_during_wait(CLOCKWR, true, A_WRITER, 60000);
}

static void cancel_request_to_timedrdlock_behind_a_writer_past_its_deadline_acts_after_etimedout(void)
{
	cancel_during_wait(TIMEDRD, false, A_WRITER, 50);
	cancel_during_wait(CLOCKRD, true, A_WRITER, 50);
}

/* ---- asynchronous cancellation outside lock calls ---- */

enum { SPINNERS = 4, SPINNER_LOCKS = 2 };

struct spinner {
	pthread_rwlock_t locks[SPINNER_LOCKS];
	atomic_long rounds;
};

/*
 * Rounds of: with cancellation deferred, read and write each of its locks
 * (read several times first: BRAVO's bias on, then revoked by the write);
 * then, asynchronous, spin in its own loop holding nothing.  Switching back
 * and forth is defined (pthread_setcanceltype is async-cancel-safe; a
 * request that came in the deferred part acts when the type turns
 * asynchronous).
 */
static void *spinner_main(void *arg)
{
	struct spinner *s = arg;
	struct timespec mono;
	int old;

	for (;;) {
		CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old), 0);
		for (int k = 0; k < SPINNER_LOCKS; k++) {
			for (int i = 0; i < 3; i++) {
				CHECK_RC(pthread_rwlock_rdlock(&s->locks[k]), 0);
				CHECK_RC(pthread_rwlock_unlock(&s->locks[k]), 0);
			}
			mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 2000);
			CHECK_RC(pthread_rwlock_clockrdlock(&s->locks[k], CLOCK_MONOTONIC, &mono), 0);
			CHECK_RC(pthread_rwlock_unlock(&s->locks[k]), 0);
			CHECK_RC(pthread_rwlock_wrlock(&s->locks[k]), 0);
			CHECK_RC(pthread_rwlock_unlock(&s->locks[k]), 0);
		}
		CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old), 0);
		for (volatile unsigned i = 0; i < 20000; i++)
			;
		atomic_fetch_add(&s->rounds, 1);
	}
	return NULL;
}

static void asynchronous_cancellation_of_a_thread_spinning_outside_lock_calls_leaves_its_locks_working(void)
{
	static struct spinner s[SPINNERS];
	pthread_t th[SPINNERS];

	fault_watchdog(10, "asynchronous cancellation of spinning threads");
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < SPINNERS; i++) {
			for (int k = 0; k < SPINNER_LOCKS; k++)
				CHECK_RC(pthread_rwlock_init(&s[i].locks[k], NULL), 0);
			atomic_store(&s[i].rounds, 0);
			th[i] = spawn(spinner_main, &s[i]);
		}
		for (int i = 0; i < SPINNERS; i++) {
			/* cancel at a different point of its loop each time */
			while (atomic_load(&s[i].rounds) < 5 + round * 3 + i)
				sched_yield();
			CHECK_RC(pthread_cancel(th[i]), 0);
		}
		for (int i = 0; i < SPINNERS; i++)
			CHECK(join(th[i]) == PTHREAD_CANCELED, "a thread with asynchronous cancellation "
			      "was not cancelled");
		for (int i = 0; i < SPINNERS; i++)
			for (int k = 0; k < SPINNER_LOCKS; k++) {
				check_lock_free_after(&s[i].locks[k]);
				CHECK_RC(pthread_rwlock_destroy(&s[i].locks[k]), 0);
			}
	}
	fault_watchdog(0, NULL);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(cancel_request_to_wrlock_waiting_for_fast_path_readers_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedwrlock_waiting_for_fast_path_readers_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_clockwrlock_waiting_for_fast_path_readers_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_wrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_clockwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedwrlock_waiting_for_fast_path_readers_past_its_deadline_acts_after_etimedout),
		TORTURE_CHECK(cancel_request_to_clockwrlock_waiting_for_fast_path_readers_of_a_writer_preferring_lock_past_its_deadline_acts_after_etimedout),
		TORTURE_CHECK(cancel_request_to_rdlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedrdlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_clockrdlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_wrlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedwrlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_clockwrlock_behind_a_writer_acts_after_it_returns),
		TORTURE_CHECK(cancel_request_to_timedrdlock_behind_a_writer_past_its_deadline_acts_after_etimedout),
		TORTURE_CHECK(asynchronous_cancellation_of_a_thread_spinning_outside_lock_calls_leaves_its_locks_working),
	};

	return torture_main("cancel_waits", "cancellation requests to threads waiting in rwlock calls",
			    checks, NELEM(checks), argc, argv);
}
