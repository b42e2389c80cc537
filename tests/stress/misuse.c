/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * misuse.c - wrong uses of rwlocks: each gets its result and corrupts
 * nothing (a correct use afterwards still works: lock, unlock, writer
 * exclusion, consistent data).
 *
 * Only the cases tests/preload/posix_rwlock_test does not cover
 * (doc/testing.md, "Torture and misuse", lists where each case is tested).
 * libbravo's default mode gives glibc 2.36's results: destroy returns 0
 * and changes nothing, calls on a destroyed lock work, a bad tv_nsec is
 * EINVAL even on a free lock; those checks are [default] and run under
 * glibc too.  Where glibc corrupts its lock (a wrong unlock) or crashes
 * (NULL), libbravo's result is checked under libbravo only ([libbravo]).
 * Strict mode (BRAVO_CHECK=1; torture-check's V-strict runs) gives POSIX's
 * recommended errors instead: EBUSY from destroy of a held lock, EINVAL on
 * a destroyed lock, EPERM from a wrong unlock ([strict]).
 */
#include "torture.h"

#include <limits.h>

enum op { RD, TRYRD, TIMEDRD, CLOCKRD, WR, TRYWR, TIMEDWR, CLOCKWR, NOPS };

static const char *const op_name[NOPS] = {
	"rdlock", "tryrdlock", "timedrdlock", "clockrdlock",
	"wrlock", "trywrlock", "timedwrlock", "clockwrlock",
};

static bool op_writes(enum op op)
{
	return op >= WR;
}

static bool op_timed(enum op op)
{
	return op == TIMEDRD || op == CLOCKRD || op == TIMEDWR || op == CLOCKWR;
}

/* op with the absolute time abs (CLOCK_MONOTONIC for the clock* forms). */
static int do_op(pthread_rwlock_t *l, enum op op, const struct timespec *abs)
{
	switch (op) {
	case RD: return pthread_rwlock_rdlock(l);
	case TRYRD: return pthread_rwlock_tryrdlock(l);
	case TIMEDRD: return pthread_rwlock_timedrdlock(l, abs);
	case CLOCKRD: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, abs);
	case WR: return pthread_rwlock_wrlock(l);
	case TRYWR: return pthread_rwlock_trywrlock(l);
	case TIMEDWR: return pthread_rwlock_timedwrlock(l, abs);
	default: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, abs);
	}
}

static clockid_t op_clock(enum op op)
{
	return op == CLOCKRD || op == CLOCKWR ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* ---- a helper thread that holds a lock until told ---- */

struct holder {
	pthread_rwlock_t *lock;
	bool write;
	atomic_int state; /* 1 holds, 2 release, 3 released */
	pthread_t th;
};

static void *holder_main(void *arg)
{
	struct holder *h = arg;

	CHECK_RC(h->write ? pthread_rwlock_wrlock(h->lock) : pthread_rwlock_rdlock(h->lock), 0);
	atomic_store(&h->state, 1);
	while (atomic_load(&h->state) != 2)
		sleep_ms(1);
	CHECK_RC(pthread_rwlock_unlock(h->lock), 0);
	atomic_store(&h->state, 3);
	return NULL;
}

static void holder_start(struct holder *h, pthread_rwlock_t *l, bool write)
{
	*h = (struct holder){ .lock = l, .write = write };
	h->th = spawn(holder_main, h);
	CHECK(wait_for(&h->state, 1, 10000), "the holder did not get the lock");
}

/* Tell the holder to let go (within a millisecond); holder_stop also waits for it. */
static void holder_release(struct holder *h)
{
	atomic_store(&h->state, 2);
}

static void holder_stop(struct holder *h)
{
	holder_release(h);
	join(h->th);
}

/* ---- a helper thread that runs one call and reports ---- */

struct caller {
	pthread_rwlock_t *lock;
	enum op op;
	struct timespec abs;
	atomic_int rc;  /* -1 until the call returned */
	atomic_int unlock; /* set: unlock (if taken) and return */
	pthread_t th;
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	int rc = do_op(c->lock, c->op, &c->abs);

	atomic_store(&c->rc, rc);
	while (!atomic_load(&c->unlock))
		sleep_ms(1);
	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(c->lock), 0);
	return NULL;
}

static void caller_start(struct caller *c, pthread_rwlock_t *l, enum op op, struct timespec abs)
{
	*c = (struct caller){ .lock = l, .op = op, .abs = abs, .rc = -1 };
	c->th = spawn(caller_main, c);
}

static int caller_finish(struct caller *c)
{
	atomic_store(&c->unlock, 1);
	join(c->th);
	return atomic_load(&c->rc);
}

/* From another thread: trywrlock must give want (and release what it got). */
static void *trywr_main(void *arg)
{
	return (void *)(intptr_t)pthread_rwlock_trywrlock(arg);
}

static int trywrlock_elsewhere(pthread_rwlock_t *l)
{
	int rc = (int)(intptr_t)join(spawn(trywr_main, l));

	if (rc == 0) {
		/* it left holding it: the lock is write-held by a dead thread now */
		torture_fail(__FILE__, __LINE__, "trywrlock from another thread got a lock that should be busy");
	}
	return rc;
}

/* Warm up l so that BRAVO's readers take the fast path (bias on). */
static void *warm_main(void *arg)
{
	for (int i = 0; i < 100; i++) {
		CHECK_RC(pthread_rwlock_rdlock(arg), 0);
		CHECK_RC(pthread_rwlock_unlock(arg), 0);
	}
	return NULL;
}

static void warm(pthread_rwlock_t *l)
{
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		th[i] = spawn(warm_main, l);
	for (int i = 0; i < 2; i++)
		join(th[i]);
}

/* ---- destroy of a held lock ---- */

/* [default] glibc: destroy does nothing; the lock stays held and usable. */
static void destroy_of_a_lock_the_caller_holds_returns_0_and_keeps_it_held(void)
{
	for (int kind = 0; kind < 2; kind++) {
		for (int write = 0; write < 2; write++) {
			pthread_rwlock_t l;

			init_lock_of_kind(&l, kind);
			warm(&l);
			CHECK_RC(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
			CHECK_RC(trywrlock_elsewhere(&l), EBUSY);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);
			check_lock_still_works(&l, 4, 200);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
		}
	}
}

static void destroy_of_a_lock_the_caller_holds_returns_ebusy_and_keeps_it_held(void)
{
	for (int kind = 0; kind < 2; kind++) {
		for (int write = 0; write < 2; write++) {
			pthread_rwlock_t l;

			init_lock_of_kind(&l, kind);
			warm(&l);
			CHECK_RC(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
			CHECK_RC(pthread_rwlock_destroy(&l), EBUSY);
			CHECK_RC(pthread_rwlock_destroy(&l), EBUSY);
			CHECK_RC(trywrlock_elsewhere(&l), EBUSY);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);
			CHECK_RC(pthread_rwlock_unlock(&l), EPERM);
			check_lock_still_works(&l, 4, 200);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
		}
	}
}

/*
 * [default] Held by other threads (a writer; or several readers, fast
 * path included, with a writer waiting behind them): 0, and the lock
 * goes on as if destroy had not been called.
 */
static void destroy_of_a_lock_other_threads_hold_or_wait_for_returns_0_and_keeps_it_held(void)
{
	for (int kind = 0; kind < 2; kind++) {
		pthread_rwlock_t l;
		struct holder h[3];
		struct caller w;

		init_lock_of_kind(&l, kind);
		warm(&l);
		holder_start(&h[0], &l, true);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
		holder_stop(&h[0]);
		check_lock_still_works(&l, 4, 200);

		warm(&l);
		for (int i = 0; i < 3; i++)
			holder_start(&h[i], &l, false);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		caller_start(&w, &l, WR, (struct timespec){ 0, 0 });
		sleep_ms(10);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		CHECK(atomic_load(&w.rc) == -1, "a writer got a lock three readers held");
		for (int i = 0; i < 3; i++)
			holder_stop(&h[i]);
		while (atomic_load(&w.rc) == -1)
			sleep_ms(1);
		CHECK_RC(pthread_rwlock_destroy(&l), 0); /* the writer holds it now */
		CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
		CHECK_RC(caller_finish(&w), 0);
		check_lock_still_works(&l, 4, 200);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
}

/* [strict] Held by other threads, or waited for: EBUSY. */
static void destroy_of_a_lock_other_threads_hold_returns_ebusy_and_keeps_it_held(void)
{
	for (int kind = 0; kind < 2; kind++) {
		pthread_rwlock_t l;
		struct holder h[3];
		struct caller w;

		init_lock_of_kind(&l, kind);
		warm(&l);
		holder_start(&h[0], &l, true);
		CHECK_RC(pthread_rwlock_destroy(&l), EBUSY);
		CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
		holder_stop(&h[0]);
		check_lock_still_works(&l, 4, 200);

		warm(&l);
		for (int i = 0; i < 3; i++)
			holder_start(&h[i], &l, false);
		CHECK_RC(pthread_rwlock_destroy(&l), EBUSY);
		caller_start(&w, &l, WR, (struct timespec){ 0, 0 });
		sleep_ms(10);
		CHECK_RC(pthread_rwlock_destroy(&l), EBUSY);
		CHECK(atomic_load(&w.rc) == -1, "a writer got a lock three readers held");
		for (int i = 0; i < 3; i++)
			holder_stop(&h[i]);
		while (atomic_load(&w.rc) == -1)
			sleep_ms(1);
		CHECK_RC(pthread_rwlock_destroy(&l), EBUSY); /* the writer holds it now */
		CHECK_RC(caller_finish(&w), 0);
		check_lock_still_works(&l, 4, 200);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
}

/* ---- destroyed locks ---- */

/* From another thread: trywrlock must get the lock (it is released again). */
static void *trywr_release_main(void *arg)
{
	int rc = pthread_rwlock_trywrlock(arg);

	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(arg), 0);
	return (void *)(intptr_t)rc;
}

static int trywrlock_elsewhere_free(pthread_rwlock_t *l)
{
	return (int)(intptr_t)join(spawn(trywr_release_main, l));
}

/* [default] glibc: destroy does nothing, so destroying again does nothing either. */
static void double_destroy_returns_0_and_the_lock_still_works(void)
{
	pthread_rwlock_t l;

	for (int round = 0; round < 3; round++) {
		init_lock_of_kind(&l, round == 1);
		check_lock_still_works(&l, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		check_lock_still_works(&l, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
	init_lock_of_kind(&l, false);
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* [default] glibc: a destroyed lock is the lock it was. */
static void lock_calls_on_a_destroyed_lock_work_as_on_glibc(void)
{
	pthread_rwlock_t l;

	init_lock_of_kind(&l, false);
	warm(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	for (int op = 0; op < NOPS; op++) {
		struct timespec abs = ts_add_ms(ts_now(op_clock(op)), 1000);
		int rc = do_op(&l, op, &abs);

		CHECK(rc == 0, "%s on a destroyed lock returned %s, expected 0", op_name[op], errname(rc));
		CHECK_RC(trywrlock_elsewhere(&l), EBUSY);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
		CHECK_RC(trywrlock_elsewhere_free(&l), 0);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

static void double_destroy_returns_einval_and_init_makes_the_lock_usable_again(void)
{
	pthread_rwlock_t l;

	for (int round = 0; round < 3; round++) {
		init_lock_of_kind(&l, round == 1);
		check_lock_still_works(&l, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
		CHECK_RC(pthread_rwlock_destroy(&l), EINVAL);
		CHECK_RC(pthread_rwlock_destroy(&l), EINVAL);
	}
	init_lock_of_kind(&l, false);
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

static void lock_calls_on_a_destroyed_lock_return_einval_and_take_nothing(void)
{
	pthread_rwlock_t l;

	init_lock_of_kind(&l, false);
	warm(&l);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	for (int op = 0; op < NOPS; op++) {
		struct timespec abs = ts_add_ms(ts_now(op_clock(op)), 1000);
		int rc = do_op(&l, op, &abs);

		CHECK(rc == EINVAL, "%s on a destroyed lock returned %s, expected EINVAL", op_name[op],
		      errname(rc));
		/* nothing was taken, and unlock is a call on a destroyed lock too */
		rc = pthread_rwlock_unlock(&l);
		CHECK(rc == EINVAL, "unlock after %s on a destroyed lock returned %s, expected EINVAL",
		      op_name[op], errname(rc));
	}
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* ---- NULL ---- */

static void every_call_on_a_null_lock_returns_einval(void)
{
	pthread_rwlock_t *n = hidden_null();
	pthread_rwlock_t l;

	for (int op = 0; op < NOPS; op++) {
		struct timespec abs = ts_add_ms(ts_now(op_clock(op)), 1000);
		int rc = do_op(n, op, &abs);

		CHECK(rc == EINVAL, "%s(NULL) returned %s, expected EINVAL", op_name[op], errname(rc));
	}
	CHECK_RC(pthread_rwlock_init(n, NULL), EINVAL);
	CHECK_RC(pthread_rwlock_destroy(n), EINVAL);
	CHECK_RC(pthread_rwlock_unlock(n), EINVAL);
	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	check_lock_still_works(&l, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* ---- wrong unlocks under load ---- */

struct rogue {
	pthread_rwlock_t *lock;
	atomic_int *stop;
	long eperm;
};

static void *rogue_main(void *arg)
{
	struct rogue *r = arg;

	while (!atomic_load(r->stop)) {
		int rc = pthread_rwlock_unlock(r->lock);

		CHECK(rc == EPERM, "unlock by a thread that holds nothing returned %s, expected EPERM",
		      errname(rc));
		r->eperm++;
		sched_yield();
	}
	return NULL;
}

/* Writers only (no read hold a wrong unlock could release). */
struct writers_run {
	pthread_rwlock_t *lock;
	struct guarded *g;
	int ops;
};

static void *writer_only_main(void *arg)
{
	struct writers_run *x = arg;

	for (int i = 0; i < x->ops; i++) {
		CHECK_RC(pthread_rwlock_wrlock(x->lock), 0);
		guarded_write_enter(x->g);
		guarded_write_update(x->g, i % 8 == 0);
		guarded_write_leave(x->g);
		CHECK_RC(pthread_rwlock_unlock(x->lock), 0);
	}
	return NULL;
}

static void *rogue_default_main(void *arg)
{
	struct rogue *r = arg;

	while (!atomic_load(r->stop)) {
		int rc = pthread_rwlock_unlock(r->lock);

		CHECK(rc == 0, "unlock by a thread that holds nothing returned %s, expected 0",
		      errname(rc));
		r->eperm++;
		sched_yield();
	}
	return NULL;
}

/*
 * [libbravo, default] Threads that hold nothing unlock a lock over and
 * over while others write-lock it correctly: every wrong unlock returns 0
 * and releases nothing (the lock is free or write-held by another thread:
 * glibc corrupts its lock there), so the writers' exclusion and data stay
 * intact.  (A wrong unlock of a read-held lock releases a reader's hold,
 * as glibc's does: tests/preload/posix_rwlock/unlock_unheld.c.)
 */
static void wrong_unlocks_of_a_write_locked_lock_during_heavy_use_return_0_and_release_nothing(void)
{
	pthread_rwlock_t l;
	atomic_int stop = 0;
	struct rogue r[2];
	pthread_t th[2], wt[4];

	for (int kind = 0; kind < 2; kind++) {
		struct guarded g;
		struct writers_run x = { .lock = &l, .g = &g, .ops = 300 * (int)torture_scale() };

		memset(&g, 0, sizeof(g));
		init_lock_of_kind(&l, kind);
		atomic_store(&stop, 0);
		for (int i = 0; i < 2; i++) {
			r[i] = (struct rogue){ .lock = &l, .stop = &stop };
			th[i] = spawn(rogue_default_main, &r[i]);
		}
		for (int i = 0; i < 4; i++)
			wt[i] = spawn(writer_only_main, &x);
		for (int i = 0; i < 4; i++)
			join(wt[i]);
		atomic_store(&stop, 1);
		for (int i = 0; i < 2; i++)
			join(th[i]);
		CHECK(g.writes == (uint64_t)4 * x.ops, "%llu writes recorded, %d made: an update was lost",
		      (unsigned long long)g.writes, 4 * x.ops);
		check_lock_still_works(&l, 4, 200);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
}

/*
 * [strict] Threads that hold nothing unlock the lock over and over while
 * others use it correctly: every wrong unlock returns EPERM, and the
 * others' exclusion and data stay intact.
 */
static void wrong_unlocks_during_heavy_use_return_eperm_and_corrupt_nothing(void)
{
	pthread_rwlock_t l;
	atomic_int stop = 0;
	struct rogue r[2];
	pthread_t th[2];

	for (int kind = 0; kind < 2; kind++) {
		init_lock_of_kind(&l, kind);
		atomic_store(&stop, 0);
		for (int i = 0; i < 2; i++) {
			r[i] = (struct rogue){ .lock = &l, .stop = &stop };
			th[i] = spawn(rogue_main, &r[i]);
		}
		check_lock_still_works(&l, 8, 500 * (int)torture_scale());
		atomic_store(&stop, 1);
		for (int i = 0; i < 2; i++)
			join(th[i]);
		check_lock_still_works(&l, 4, 200);
		CHECK_RC(pthread_rwlock_destroy(&l), 0);
	}
}

/* ---- zeroed memory ---- */

/*
 * A lock used hard (BRAVO bias on, heap block attached), then zeroed
 * without destroy, as programs reuse memory (std::shared_mutex never
 * calls destroy): a fresh unlocked lock.  Also after destroy.
 */
/*
 * A thread whose writes waited (libbravo's bravo-pthread then takes its
 * next writes by glibc's blocking wrlock, not a try-lock first) and that
 * holds the lock for writing: a write lock of it again is EDEADLK, and so
 * is a read lock, as glibc's.
 */
static void write_relock_by_its_writer_after_contended_writes_returns_edeadlk(void)
{
	pthread_rwlock_t l;

	init_lock_of_kind(&l, false);
	for (int i = 0; i < 4; i++) {
		struct holder h;

		holder_start(&h, &l, true);
		holder_release(&h);
		CHECK_RC(pthread_rwlock_wrlock(&l), 0); /* waits for it */
		CHECK_RC(pthread_rwlock_wrlock(&l), EDEADLK);
		CHECK_RC(pthread_rwlock_rdlock(&l), EDEADLK);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
		holder_stop(&h);
	}
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

static void used_lock_zeroed_without_destroy_is_a_fresh_unlocked_lock(void)
{
	pthread_rwlock_t *l = calloc(1, sizeof(*l));

	CHECK(l != NULL, "calloc failed");
	for (long round = 0; round < 20 * torture_scale(); round++) {
		warm(l);
		check_lock_still_works(l, 4, 50);
		if (round % 4 == 3)
			CHECK_RC(pthread_rwlock_destroy(l), 0);
		memset(l, 0, sizeof(*l));
		CHECK_RC(pthread_rwlock_trywrlock(l), 0);
		CHECK_RC(trywrlock_elsewhere(l), EBUSY);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	check_lock_still_works(l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(l), 0);
	free(l);
}

/* ---- odd deadlines ---- */

static const struct timespec bad_nsec[] = {
	{ 1, -1 }, { 1, 1000000000L }, { 1, LONG_MAX }, { 1, LONG_MIN },
	{ -1, -1 }, { LONG_MIN, 1000000000L }, { LONG_MAX, -1 }, { LONG_MAX, LONG_MAX },
	{ 0, 1000000000L },
};

/*
 * POSIX lets an implementation skip the check of abstime when the lock can
 * be had at once; glibc 2.36 checks it first, and so does libbravo (both
 * modes): EINVAL even on a free lock, and nothing is taken.
 */
static void timed_locks_with_invalid_nsec_return_einval_on_a_free_lock(void)
{
	for (int op = 0; op < NOPS; op++) {
		if (!op_timed(op))
			continue;
		for (size_t j = 0; j < NELEM(bad_nsec); j++) {
			pthread_rwlock_t l;
			int rc;

			CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
			rc = do_op(&l, op, &bad_nsec[j]);
			CHECK(rc == EINVAL, "%s with {%ld, %ld} on a free lock returned %s, expected EINVAL",
			      op_name[op], (long)bad_nsec[j].tv_sec, bad_nsec[j].tv_nsec, errname(rc));
			CHECK_RC(trywrlock_elsewhere_free(&l), 0);
			check_lock_still_works(&l, 2, 50);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
		}
	}
}

/*
 * A lock held by another thread (for writing: every timed call would
 * block): an invalid tv_nsec is EINVAL whatever tv_sec says, even a
 * deadline long past or at the end of time; nothing is taken and the
 * lock is unharmed.
 */
static void timed_locks_with_invalid_nsec_return_einval_on_a_busy_lock_whatever_tv_sec(void)
{
	pthread_rwlock_t l;
	struct holder h;

	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	holder_start(&h, &l, true);
	for (int op = 0; op < NOPS; op++) {
		if (!op_timed(op))
			continue;
		for (size_t j = 0; j < NELEM(bad_nsec); j++) {
			int rc = do_op(&l, op, &bad_nsec[j]);

			CHECK(rc == EINVAL, "%s with {%ld, %ld} on a write-held lock returned %s, expected EINVAL",
			      op_name[op], (long)bad_nsec[j].tv_sec, bad_nsec[j].tv_nsec, errname(rc));
		}
	}
	CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
	holder_stop(&h);
	check_lock_still_works(&l, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

/* tv_sec = LONG_MIN (the most negative time_t): long past. */
static void timed_locks_with_most_negative_tv_sec_time_out_on_a_busy_lock_and_take_a_free_one(void)
{
	static const struct timespec past[] = { { LONG_MIN, 0 }, { LONG_MIN, 999999999L }, { LONG_MIN / 2, 1 } };

	for (int op = 0; op < NOPS; op++) {
		if (!op_timed(op))
			continue;
		for (size_t j = 0; j < NELEM(past); j++) {
			pthread_rwlock_t l;
			struct holder h;

			CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
			holder_start(&h, &l, true);
			CHECK_RC(do_op(&l, op, &past[j]), ETIMEDOUT);
			holder_stop(&h);
			CHECK_RC(do_op(&l, op, &past[j]), 0);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);
			check_lock_still_works(&l, 2, 50);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
		}
	}
}

/*
 * tv_sec = LONG_MAX (the largest time_t): a deadline that never comes.
 * On a free lock the call takes it; on a busy lock it waits (it has
 * neither failed nor timed out 50 ms later) and takes the lock when the
 * holder leaves.  A conversion that overflowed would show as an early
 * ETIMEDOUT or EINVAL.
 */
static void timed_locks_with_largest_tv_sec_wait_for_a_busy_lock_and_take_a_free_one(void)
{
	static const struct timespec never[] = { { LONG_MAX, 0 }, { LONG_MAX, 999999999L }, { LONG_MAX / 2, 0 } };

	for (int op = 0; op < NOPS; op++) {
		if (!op_timed(op))
			continue;
		for (size_t j = 0; j < NELEM(never); j++) {
			pthread_rwlock_t l;
			struct holder h;
			struct caller c;
			int rc;

			CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
			CHECK_RC(do_op(&l, op, &never[j]), 0);
			CHECK_RC(trywrlock_elsewhere(&l), EBUSY);
			CHECK_RC(pthread_rwlock_unlock(&l), 0);

			/* busy for this op: a writer holds it, or a reader for a write op */
			holder_start(&h, &l, !op_writes(op));
			caller_start(&c, &l, op, never[j]);
			sleep_ms(50);
			rc = atomic_load(&c.rc);
			CHECK(rc == -1, "%s with {%ld, %ld} on a busy lock returned %s instead of waiting",
			      op_name[op], (long)never[j].tv_sec, never[j].tv_nsec, errname(rc));
			holder_stop(&h);
			while ((rc = atomic_load(&c.rc)) == -1)
				sleep_ms(1);
			CHECK(rc == 0, "%s with {%ld, %ld} returned %s after the holder left", op_name[op],
			      (long)never[j].tv_sec, never[j].tv_nsec, errname(rc));
			CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY);
			CHECK_RC(caller_finish(&c), 0);
			check_lock_still_works(&l, 2, 50);
			CHECK_RC(pthread_rwlock_destroy(&l), 0);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		DEFAULT_CHECK(destroy_of_a_lock_the_caller_holds_returns_0_and_keeps_it_held),
		STRICT_CHECK(destroy_of_a_lock_the_caller_holds_returns_ebusy_and_keeps_it_held),
		DEFAULT_CHECK(destroy_of_a_lock_other_threads_hold_or_wait_for_returns_0_and_keeps_it_held),
		STRICT_CHECK(destroy_of_a_lock_other_threads_hold_returns_ebusy_and_keeps_it_held),
		DEFAULT_CHECK(double_destroy_returns_0_and_the_lock_still_works),
		STRICT_CHECK(double_destroy_returns_einval_and_init_makes_the_lock_usable_again),
		DEFAULT_CHECK(lock_calls_on_a_destroyed_lock_work_as_on_glibc),
		STRICT_CHECK(lock_calls_on_a_destroyed_lock_return_einval_and_take_nothing),
		LIBBRAVO_CHECK(every_call_on_a_null_lock_returns_einval),
		LIBBRAVO_DEFAULT_CHECK(wrong_unlocks_of_a_write_locked_lock_during_heavy_use_return_0_and_release_nothing),
		STRICT_CHECK(wrong_unlocks_during_heavy_use_return_eperm_and_corrupt_nothing),
		TORTURE_CHECK(write_relock_by_its_writer_after_contended_writes_returns_edeadlk),
		TORTURE_CHECK(used_lock_zeroed_without_destroy_is_a_fresh_unlocked_lock),
		TORTURE_CHECK(timed_locks_with_invalid_nsec_return_einval_on_a_free_lock),
		TORTURE_CHECK(timed_locks_with_invalid_nsec_return_einval_on_a_busy_lock_whatever_tv_sec),
		TORTURE_CHECK(timed_locks_with_most_negative_tv_sec_time_out_on_a_busy_lock_and_take_a_free_one),
		TORTURE_CHECK(timed_locks_with_largest_tv_sec_wait_for_a_busy_lock_and_take_a_free_one),
	};

	return torture_main("misuse", "wrong uses of rwlocks: each gets its result and corrupts nothing",
			    checks, NELEM(checks), argc, argv);
}
