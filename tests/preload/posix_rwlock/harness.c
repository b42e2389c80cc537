/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * harness.c - the helpers of tests/preload/posix_rwlock_test: lock
 * operations by number, threads that hold a lock, try it once or block in
 * it, and the checks several sections use (posix_rwlock.h declares them).
 */
#include "posix_rwlock.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

const char *clock_name(clockid_t c)
{
	switch (c) {
	case CLOCK_REALTIME: return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC: return "CLOCK_MONOTONIC";
	case CLOCK_PROCESS_CPUTIME_ID: return "CLOCK_PROCESS_CPUTIME_ID";
	case CLOCK_THREAD_CPUTIME_ID: return "CLOCK_THREAD_CPUTIME_ID";
	case CLOCK_MONOTONIC_RAW: return "CLOCK_MONOTONIC_RAW";
	case CLOCK_BOOTTIME: return "CLOCK_BOOTTIME";
	case CLOCK_REALTIME_COARSE: return "CLOCK_REALTIME_COARSE";
	case CLOCK_MONOTONIC_COARSE: return "CLOCK_MONOTONIC_COARSE";
	default: return "(bogus clock id)";
	}
}

void init_default(pthread_rwlock_t *l)
{
	ck_assert_rc(pthread_rwlock_init(l, NULL), 0);
}

void init_kind(pthread_rwlock_t *l, int kind, int pshared)
{
	pthread_rwlockattr_t a;

	ck_assert_rc(pthread_rwlockattr_init(&a), 0);
	ck_assert_rc(pthread_rwlockattr_setkind_np(&a, kind), 0);
	ck_assert_rc(pthread_rwlockattr_setpshared(&a, pshared), 0);
	ck_assert_rc(pthread_rwlock_init(l, &a), 0);
	ck_assert_rc(pthread_rwlockattr_destroy(&a), 0);
}

void init_prefer_writer(pthread_rwlock_t *l)
{
	init_kind(l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, PTHREAD_PROCESS_PRIVATE);
}

/* ------------------------------------------------------------------ */
/* Lock operations by number                                           */
/* ------------------------------------------------------------------ */

const char *const op_names[OP_COUNT] = {
	"pthread_rwlock_rdlock",
	"pthread_rwlock_tryrdlock",
	"pthread_rwlock_timedrdlock",
	"pthread_rwlock_clockrdlock(CLOCK_REALTIME)",
	"pthread_rwlock_clockrdlock(CLOCK_MONOTONIC)",
	"pthread_rwlock_wrlock",
	"pthread_rwlock_trywrlock",
	"pthread_rwlock_timedwrlock",
	"pthread_rwlock_clockwrlock(CLOCK_REALTIME)",
	"pthread_rwlock_clockwrlock(CLOCK_MONOTONIC)",
};

const enum op rd_timed_ops[] = { OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO };
const enum op wr_timed_ops[] = { OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
const enum op rd_blocking_ops[] = { OP_RD, OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO };
const enum op wr_blocking_ops[] = { OP_WR, OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
bool op_is_write(enum op op)
{
	return op >= OP_WR;
}

bool op_is_try(enum op op)
{
	return op == OP_TRYRD || op == OP_TRYWR;
}

/* A timed or clock op: it takes a deadline, and may return ETIMEDOUT. */
bool op_is_timed(enum op op)
{
	return op != OP_RD && op != OP_WR && !op_is_try(op);
}

clockid_t op_clock(enum op op)
{
	return (op == OP_CLOCKRD_MONO || op == OP_CLOCKWR_MONO) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* Run op with an explicit absolute time (ignored by untimed ops). */
int op_abs(pthread_rwlock_t *l, enum op op, const struct timespec *abs)
{
	switch (op) {
	case OP_RD: return pthread_rwlock_rdlock(l);
	case OP_TRYRD: return pthread_rwlock_tryrdlock(l);
	case OP_TIMEDRD: return pthread_rwlock_timedrdlock(l, abs);
	case OP_CLOCKRD_RT: return pthread_rwlock_clockrdlock(l, CLOCK_REALTIME, abs);
	case OP_CLOCKRD_MONO: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, abs);
	case OP_WR: return pthread_rwlock_wrlock(l);
	case OP_TRYWR: return pthread_rwlock_trywrlock(l);
	case OP_TIMEDWR: return pthread_rwlock_timedwrlock(l, abs);
	case OP_CLOCKWR_RT: return pthread_rwlock_clockwrlock(l, CLOCK_REALTIME, abs);
	case OP_CLOCKWR_MONO: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, abs);
	default: return -1;
	}
}

/* Run op with a deadline ms milliseconds from now on the op's clock. */
int op_rel(pthread_rwlock_t *l, enum op op, long ms)
{
	struct timespec abs = ts_add_ms(ts_now(op_clock(op)), ms);

	return op_abs(l, op, &abs);
}

/* ------------------------------------------------------------------ */
/* Helper threads                                                      */
/* ------------------------------------------------------------------ */

void *holder_main(void *p)
{
	struct holder *h = p;

	for (int i = 0; i < h->warm; i++) {
		if (pthread_rwlock_rdlock(h->lock) != 0 || pthread_rwlock_unlock(h->lock) != 0)
			break;
	}
	h->lock_rc = h->write ? pthread_rwlock_wrlock(h->lock) : pthread_rwlock_rdlock(h->lock);
	sem_post(&h->acquired);
	sem_wait(&h->release);
	if (h->lock_rc == 0 && !h->keep)
		h->unlock_rc = pthread_rwlock_unlock(h->lock);
	return NULL;
}

void holder_start_warm(struct holder *h, pthread_rwlock_t *l, bool write, int warm)
{
	memset(h, 0, sizeof(*h));
	h->lock = l;
	h->write = write;
	h->warm = warm;
	sem_init(&h->acquired, 0, 0);
	sem_init(&h->release, 0, 0);
	ck_assert_rc(pthread_create(&h->th, NULL, holder_main, h), 0);
	sem_wait(&h->acquired);
	ck_assert_msg(h->lock_rc == 0, "holder thread: %s returned %s",
		      write ? "pthread_rwlock_wrlock" : "pthread_rwlock_rdlock", errname(h->lock_rc));
}

void holder_start(struct holder *h, pthread_rwlock_t *l, bool write)
{
	holder_start_warm(h, l, write, 0);
}

/* Let the holder exit without unlocking (glibc: another thread released its hold). */
void holder_stop_keeping(struct holder *h)
{
	h->keep = true;
	holder_stop(h);
}

void holder_stop(struct holder *h)
{
	sem_post(&h->release);
	ck_assert_rc(pthread_join(h->th, NULL), 0);
	ck_assert_msg(h->unlock_rc == 0, "holder thread: pthread_rwlock_unlock returned %s",
		      errname(h->unlock_rc));
	sem_destroy(&h->acquired);
	sem_destroy(&h->release);
}

/* One operation in a fresh thread; released at once if it succeeded. */
struct oneshot {
	pthread_rwlock_t *lock;
	enum op op;
	long ms;
	int rc, unlock_rc;
};

static void *oneshot_main(void *p)
{
	struct oneshot *o = p;

	o->rc = op_rel(o->lock, o->op, o->ms);
	if (o->rc == 0)
		o->unlock_rc = pthread_rwlock_unlock(o->lock);
	return NULL;
}

/* Returns the op's result in another thread (which unlocks on success). */
int other_thread_op(pthread_rwlock_t *l, enum op op, long ms)
{
	struct oneshot o = { .lock = l, .op = op, .ms = ms };
	pthread_t th;

	ck_assert_rc(pthread_create(&th, NULL, oneshot_main, &o), 0);
	ck_assert_rc(pthread_join(th, NULL), 0);
	if (o.rc == 0)
		ck_assert_msg(o.unlock_rc == 0, "other thread: unlock after %s returned %s",
			      op_names[op], errname(o.unlock_rc));
	return o.rc;
}

/* The order in which waiters got through (struct waiter's seq). */
static atomic_long g_seq;

static void *waiter_main(void *p)
{
	struct waiter *w = p;

	atomic_store(&w->tid, gettid());
	sem_post(&w->started);
	w->rc = op_rel(w->lock, w->op, w->ms);
	w->seq = atomic_fetch_add(&g_seq, 1);
	atomic_store(&w->done, 1);
	sem_post(&w->finished);
	if (w->rc == 0) {
		if (w->hold)
			sem_wait(&w->release);
		w->unlock_rc = pthread_rwlock_unlock(w->lock);
	}
	return NULL;
}

void waiter_start(struct waiter *w, pthread_rwlock_t *l, enum op op, long ms, bool hold)
{
	memset(w, 0, sizeof(*w));
	w->lock = l;
	w->op = op;
	w->ms = ms;
	w->hold = hold;
	sem_init(&w->started, 0, 0);
	sem_init(&w->finished, 0, 0);
	sem_init(&w->release, 0, 0);
	ck_assert_rc(pthread_create(&w->th, NULL, waiter_main, w), 0);
	sem_wait(&w->started);
}

/*
 * Assert that the waiter is stuck in its call: not done, and seen asleep in
 * the kernel a few times in a row (or still not through after 1 s, for an
 * implementation that spins or yields while it waits).
 */
void waiter_expect_blocked(struct waiter *w)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	int asleep = 0;

	for (;;) {
		char s;

		ck_assert_msg(!atomic_load(&w->done),
			      "%s returned %s although it should have blocked",
			      op_names[w->op], errname(w->rc));
		s = task_state(w->tid);
		if (s == 'S' || s == 'D') {
			if (++asleep >= 3)
				break;
		} else {
			asleep = 0;
		}
		if (ms_since(start) > 1000)
			break;
		sleep_ms(2);
	}
	sleep_ms(10);
	ck_assert_msg(!atomic_load(&w->done), "%s returned %s although it should have blocked",
		      op_names[w->op], errname(w->rc));
}

/* Wait up to ms for the waiter's call to return; true if it did. */
bool waiter_wait_done(struct waiter *w, long ms)
{
	struct timespec dl = ts_add_ms(ts_now(CLOCK_REALTIME), ms);

	while (sem_timedwait(&w->finished, &dl) != 0) {
		if (errno != EINTR)
			return false;
	}
	sem_post(&w->finished); /* let a later call see it too */
	return true;
}

void waiter_release_and_join(struct waiter *w)
{
	sem_post(&w->release);
	ck_assert_rc(pthread_join(w->th, NULL), 0);
	if (w->rc == 0)
		ck_assert_msg(w->unlock_rc == 0, "waiter thread: unlock after %s returned %s",
			      op_names[w->op], errname(w->unlock_rc));
	sem_destroy(&w->started);
	sem_destroy(&w->finished);
	sem_destroy(&w->release);
}

/*
 * Wait until a new reader (a fresh thread) is refused by tryrdlock, which
 * for a writer-preferring lock means that the writer is now waiting.
 * Bounded to 3 s; then asserts it stays so for a while.
 */
void wait_until_new_readers_refused(pthread_rwlock_t *l, struct waiter *writer)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	int rc;

	for (;;) {
		ck_assert_msg(!atomic_load(&writer->done), "the writer got through (%s) while a read lock was held",
			      errname(writer->rc));
		rc = other_thread_op(l, OP_TRYRD, 0);
		if (rc == EBUSY)
			break;
		ck_assert_msg(rc == 0, "pthread_rwlock_tryrdlock in a new thread returned %s", errname(rc));
		ck_assert_msg(ms_since(start) < 3000,
			      "a new reader still got the read lock with tryrdlock 3 s after a writer "
			      "started waiting on a writer-preferring lock");
		sleep_ms(1);
	}
	for (int i = 0; i < 20; i++) {
		ck_assert_other(l, OP_TRYRD, 0, EBUSY);
		sleep_ms(1);
	}
}


/* ------------------------------------------------------------------ */
/* Checks several sections use                                         */
/* ------------------------------------------------------------------ */

/* After an EDEADLK, the caller still holds the lock for writing. */
void expect_still_write_held_then_release(pthread_rwlock_t *l)
{
	ck_assert_other(l, OP_TRYRD, 0, EBUSY);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
	ck_assert_other(l, OP_TRYRD, 0, 0);
}

/* After an EDEADLK, the caller still holds the lock for reading (once). */
void expect_still_read_held_then_release(pthread_rwlock_t *l)
{
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
}

/* Many read cycles first, so that any reader-side fast path is warm. */
void warm_reads(pthread_rwlock_t *l, int n)
{
	for (int i = 0; i < n; i++) {
		if (pthread_rwlock_rdlock(l) != 0 || pthread_rwlock_unlock(l) != 0)
			break;
	}
}

/* A lock (from an initializer, zeroed memory, re-init) works as a lock. */
void check_basic_usage(pthread_rwlock_t *l)
{
	struct holder h;

	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_other(l, OP_TRYRD, 0, EBUSY);
	ck_assert_other(l, OP_TIMEDWR, 10, ETIMEDOUT);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	holder_start(&h, l, true);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(op_rel(l, OP_TIMEDWR, 100), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(op_rel(l, OP_CLOCKRD_MONO, 100), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
}
