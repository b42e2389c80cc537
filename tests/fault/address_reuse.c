/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * address_reuse.c - a lock's memory reused for a new lock, without
 * pthread_rwlock_init, after every kind of hold and hand-off.
 *
 * Servers keep objects in pools: an object given back is handed out again
 * at the same address, its bytes zeroed (or set to
 * PTHREAD_RWLOCK_INITIALIZER), and nobody calls pthread_rwlock_destroy or
 * pthread_rwlock_init on the lock inside it.  Under glibc the lock's state
 * is its bytes, so the object comes back with a fresh, free lock, whatever
 * happened to the old one.  Here thread A uses the lock L of a pooled
 * object and then stops using it (A stays alive, blocked on something
 * else, and never touches L again); in the hand-off cases thread B, which
 * holds nothing, unlocks A's read hold on A's behalf (glibc allows it and
 * returns 0).  Then the object is reused: thread C read-locks the new lock
 * (taking the path A took: BRAVO's fast path after one read pair, or the
 * first, slow read of a fresh lock) and holds it, and a writer must be
 * kept out (trywrlock EBUSY, timedwrlock ETIMEDOUT, and struct guarded to
 * show a writer beside C), then get in once C has left; the new lock
 * keeps exclusion afterwards (check_lock_still_works), also after A's exit.
 *
 * The hand-off checks are [default]: in strict mode (BRAVO_CHECK=1) an
 * unlock by a thread that holds nothing is EPERM and releases nothing.
 *
 * Regression (issue item 1, "stale hand-off record on a reused address"):
 * libbravo remembered the hand-off of a BRAVO fast-path hold per address,
 * and the record outlived the lock: on the reused address the writer
 * tolerated C's fast-path slot as if it were A's stale one, and entered
 * beside C (BRAVO variants, every run).  The same records of Per-CPU
 * sub-lock and Cohort node holds left percpu (and cohort-rw with two
 * nodes) wedged now and then after a reuse (a hang, caught by name).
 */
#include "fault.h"

#include <semaphore.h>

/* ---- the pool: each object always handed out at the same address ---- */

struct object {
	pthread_rwlock_t lock;
	struct guarded data;
};

enum reuse { REUSE_MEMSET, REUSE_INITIALIZER };

/*
 * The pool: one object per check, so that what one check leaves behind
 * at its address is no other check's business.
 */
enum { POOL_OBJECTS = 16 };
static struct object pool[POOL_OBJECTS];

/* The pooled object, made ready for a new user as pools do (no init). */
static struct object *pool_get(struct object *o, enum reuse how)
{
	if (how == REUSE_MEMSET) {
		memset(o, 0, sizeof(*o));
	} else {
		memset(&o->data, 0, sizeof(o->data));
		o->lock = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
	}
	return o;
}

/* ---- threads ---- */

/* How thread A (first user) and thread C (new user) use the lock. */
enum hold {
	FAST_READ_HANDED_OFF,   /* A: warm, rdlock (fast path); B unlocks it */
	SLOW_READ_HANDED_OFF,   /* A: first read of a fresh lock (slow); B unlocks it */
	FAST_READ_RELEASED,     /* A: warm, rdlock, unlock */
	WRITE_RELEASED,         /* A: warm, wrlock, unlock */
};

static bool hold_is_fast(enum hold h)
{
	return h != SLOW_READ_HANDED_OFF;
}

static bool hold_is_handed_off(enum hold h)
{
	return h == FAST_READ_HANDED_OFF || h == SLOW_READ_HANDED_OFF;
}

/* A few read pairs on the calling thread: BRAVO's bias is on after them. */
static void warm_here(pthread_rwlock_t *l, int pairs)
{
	for (int i = 0; i < pairs; i++) {
		CHECK_RC(pthread_rwlock_rdlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
}

struct first_user {
	pthread_rwlock_t *lock;
	enum hold hold;
	atomic_int done;   /* A has used the lock and stopped */
	sem_t release;     /* what A blocks on afterwards */
};

static void *first_user_main(void *arg)
{
	struct first_user *a = arg;

	if (a->hold != SLOW_READ_HANDED_OFF)
		warm_here(a->lock, 8);
	switch (a->hold) {
	case FAST_READ_HANDED_OFF:
	case SLOW_READ_HANDED_OFF:
		CHECK_RC(pthread_rwlock_rdlock(a->lock), 0); /* and never unlocks it */
		break;
	case FAST_READ_RELEASED:
		CHECK_RC(pthread_rwlock_rdlock(a->lock), 0);
		CHECK_RC(pthread_rwlock_unlock(a->lock), 0);
		break;
	case WRITE_RELEASED:
		CHECK_RC(pthread_rwlock_wrlock(a->lock), 0);
		CHECK_RC(pthread_rwlock_unlock(a->lock), 0);
		break;
	}
	atomic_store(&a->done, 1);
	/* A stops using the lock: blocked on something else until the end */
	while (sem_wait(&a->release) != 0)
		CHECK(errno == EINTR, "sem_wait: %s", strerror(errno));
	return NULL;
}

/* Thread B, which holds nothing: one unlock, on A's behalf. */
static void *unlock_main(void *arg)
{
	return (void *)(intptr_t)pthread_rwlock_unlock(arg);
}

struct new_user {
	struct object *obj;
	bool fast;
	atomic_int holding;
	atomic_int release;
};

/*
 * Thread C: read-locks the new lock (through the path A took) and holds
 * it.  For a fast-path hold one read pair is enough (the first read of a
 * lock enables BRAVO's bias), and only one: that first pair is a slow-path
 * read, and the lock has seen no fast-path unlock when C takes its hold.
 */
static void *new_user_main(void *arg)
{
	struct new_user *c = arg;

	if (c->fast)
		warm_here(&c->obj->lock, 1);
	CHECK_RC(pthread_rwlock_rdlock(&c->obj->lock), 0);
	guarded_read_enter(&c->obj->data);
	atomic_store(&c->holding, 1);
	while (!atomic_load(&c->release)) {
		guarded_read_check(&c->obj->data);
		sleep_ms(1);
	}
	guarded_read_check(&c->obj->data);
	guarded_read_leave(&c->obj->data);
	CHECK_RC(pthread_rwlock_unlock(&c->obj->lock), 0);
	return NULL;
}

/* A writer's try: rc, and if it got in, the guarded data says where it is. */
static int write_try(struct object *o, int rc)
{
	if (rc == 0) {
		guarded_write_enter(&o->data); /* fails by name if C is inside */
		guarded_write_update(&o->data, false);
		guarded_write_leave(&o->data);
		CHECK_RC(pthread_rwlock_unlock(&o->lock), 0);
	}
	return rc;
}

/* ---- the scenario ---- */

static void reuse_after(struct object *slot, enum hold hold, enum reuse how)
{
	struct object *o;
	pthread_rwlock_t *old;
	struct first_user a;
	struct new_user c;
	struct timespec dl;
	pthread_t ath, cth;

	fault_watchdog(10, "a lock reused at the same address");
	o = pool_get(slot, how);
	old = &o->lock;
	a = (struct first_user){ .lock = old, .hold = hold };
	CHECK(sem_init(&a.release, 0, 0) == 0, "sem_init: %s", strerror(errno));
	ath = spawn(first_user_main, &a);
	CHECK(wait_for(&a.done, 1, 10000), "thread A did not use the lock");
	if (hold_is_handed_off(hold))
		CHECK_RC((int)(intptr_t)join(spawn(unlock_main, old)), 0);

	/* the object goes back to the pool and comes out again: same address */
	o = pool_get(slot, how);
	CHECK(&o->lock == old, "the pool moved the object");
	c = (struct new_user){ .obj = o, .fast = hold_is_fast(hold) };
	cth = spawn(new_user_main, &c);
	CHECK(wait_for(&c.holding, 1, 10000), "thread C did not get the new lock for reading");

	/* C reads: writers wait */
	CHECK_RC(write_try(o, pthread_rwlock_trywrlock(&o->lock)), EBUSY);
	dl = ts_add_ms(ts_now(CLOCK_REALTIME), 50);
	CHECK_RC(write_try(o, pthread_rwlock_timedwrlock(&o->lock, &dl)), ETIMEDOUT);
	CHECK_RC(write_try(o, pthread_rwlock_trywrlock(&o->lock)), EBUSY);
	/* other readers still get in */
	CHECK_RC(pthread_rwlock_tryrdlock(&o->lock), 0);
	CHECK_RC(pthread_rwlock_unlock(&o->lock), 0);

	atomic_store(&c.release, 1);
	join(cth);
	CHECK_RC(write_try(o, pthread_rwlock_trywrlock(&o->lock)), 0);
	check_lock_still_works(&o->lock, 4, 100);

	/* A leaves at last, without touching the lock: the new lock stays free */
	CHECK(sem_post(&a.release) == 0, "sem_post: %s", strerror(errno));
	join(ath);
	sem_destroy(&a.release);
	CHECK_RC(write_try(o, pthread_rwlock_trywrlock(&o->lock)), 0);
	check_lock_still_works(&o->lock, 4, 100);
	fault_watchdog(0, NULL);
}

/* ---- checks ---- */

static void lock_zeroed_for_reuse_after_a_fast_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock(void)
{
	reuse_after(&pool[1], FAST_READ_HANDED_OFF, REUSE_MEMSET);
}

static void lock_reset_to_the_initializer_after_a_fast_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock(void)
{
	reuse_after(&pool[2], FAST_READ_HANDED_OFF, REUSE_INITIALIZER);
}

static void lock_zeroed_for_reuse_after_a_slow_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock(void)
{
	reuse_after(&pool[3], SLOW_READ_HANDED_OFF, REUSE_MEMSET);
}

static void lock_reset_to_the_initializer_after_a_slow_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock(void)
{
	reuse_after(&pool[4], SLOW_READ_HANDED_OFF, REUSE_INITIALIZER);
}

static void lock_zeroed_for_reuse_after_a_fast_path_read_hold_was_released_is_a_fresh_lock(void)
{
	reuse_after(&pool[5], FAST_READ_RELEASED, REUSE_MEMSET);
}

static void lock_zeroed_for_reuse_after_a_write_hold_was_released_is_a_fresh_lock(void)
{
	reuse_after(&pool[6], WRITE_RELEASED, REUSE_MEMSET);
}

static void lock_reset_to_the_initializer_after_a_write_hold_was_released_is_a_fresh_lock(void)
{
	reuse_after(&pool[7], WRITE_RELEASED, REUSE_INITIALIZER);
}

/*
 * The same object reused many times in a row, each time after a fast-path
 * hold of a thread that then stopped using it was unlocked by another:
 * hand-offs of one address do not pile up into a lock that lets writers
 * in beside readers.
 */
static void lock_reused_many_times_after_hand_offs_keeps_readers_and_writers_apart(void)
{
	for (long i = 0; i < 6 * torture_scale(); i++)
		reuse_after(&pool[0], i % 3 == 2 ? SLOW_READ_HANDED_OFF : FAST_READ_HANDED_OFF,
			    i % 2 ? REUSE_INITIALIZER : REUSE_MEMSET);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		DEFAULT_CHECK(lock_zeroed_for_reuse_after_a_fast_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock),
		DEFAULT_CHECK(lock_reset_to_the_initializer_after_a_fast_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock),
		DEFAULT_CHECK(lock_zeroed_for_reuse_after_a_slow_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock),
		DEFAULT_CHECK(lock_reset_to_the_initializer_after_a_slow_path_read_hold_was_unlocked_by_another_thread_is_a_fresh_lock),
		TORTURE_CHECK(lock_zeroed_for_reuse_after_a_fast_path_read_hold_was_released_is_a_fresh_lock),
		TORTURE_CHECK(lock_zeroed_for_reuse_after_a_write_hold_was_released_is_a_fresh_lock),
		TORTURE_CHECK(lock_reset_to_the_initializer_after_a_write_hold_was_released_is_a_fresh_lock),
		DEFAULT_CHECK(lock_reused_many_times_after_hand_offs_keeps_readers_and_writers_apart),
	};

	return torture_main("address_reuse",
			    "a lock's memory reused for a new lock without init, after holds and hand-offs",
			    checks, NELEM(checks), argc, argv);
}
