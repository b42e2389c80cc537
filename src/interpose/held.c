/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * held.c - the list's set-up, its spill table, and thread-exit cleanup
 * (see held.h).
 */
#include "held.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "addr_hash.h"
#include "pool.h"

const struct held held_unset[2] = { { .lock = HELD_BOTTOM }, { .lock = HELD_WALL } };

/*
 * self -1: no id is ever -1, so a lock naming "no writer" (0) is never
 * ours.  The initial image holds held_unset's address: glibc copies it
 * into a thread's block after relocating it (the main thread's too).
 */
__thread struct held_list held_tls __attribute__((tls_model("initial-exec"))) = {
	.top = (struct held *)&held_unset[0],
	.self = -1,
	.entry = { [0] = { .lock = HELD_BOTTOM }, [HELD_INLINE + 1] = { .lock = HELD_WALL } },
};

static pthread_key_t held_key;
static pthread_once_t held_key_once = PTHREAD_ONCE_INIT;
static int held_key_ok;

/* Rounds of thread-specific data destructors seen by held_at_thread_exit. */
static __thread unsigned held_exit_rounds;

#define SPILL_MIN_CAP 256u

static size_t spill_bytes(uint32_t cap)
{
	return sizeof(struct held_spill) + (size_t)cap * sizeof(struct held);
}

static struct held *spill_slot(struct held_spill *s, const void *lock)
{
	return &s->e[addr_hash(lock) & (s->cap - 1)];
}

static struct held *spill_next(struct held_spill *s, struct held *e)
{
	return e + 1 == s->e + s->cap ? s->e : e + 1;
}

/* Relaxed: the spill is the thread's own; compiler fences order it for its handlers. */
static const void *key_of(struct held *e)
{
	return __atomic_load_n(&e->lock, __ATOMIC_RELAXED);
}

struct held *held_spill_find(const void *lock)
{
	struct held_spill *s = atomic_load_explicit(&held_tls.spill, memory_order_relaxed);
	struct held *e = spill_slot(s, lock);

	/* The table is never full (held_spill_room), so an empty slot ends the probe. */
	for (const void *k; (k = key_of(e)) != NULL; e = spill_next(s, e))
		if (k == lock)
			return e;
	return NULL;
}

void held_spill_remove(struct held *e)
{
	struct held_spill *s = atomic_load_explicit(&held_tls.spill, memory_order_relaxed);

	__atomic_store_n(&e->lock, HELD_SPILL_TOMB, __ATOMIC_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_fetch_sub_explicit(&s->used, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->tombs, 1, memory_order_relaxed);
}

/*
 * A new table of cap slots holding old's entries (tombstones dropped), and
 * it is the spill; false if no memory.  Every signal blocked: no handler
 * of this thread sees the table half copied, and none can be inside a
 * spill operation (held_push_slow grows only when it is the only one).
 */
static bool spill_rebuild(uint32_t cap)
{
	struct held_list *l = &held_tls;
	struct held_spill *old = atomic_load_explicit(&l->spill, memory_order_relaxed);
	struct held_spill *s = pool_alloc(spill_bytes(cap));
	uint32_t n = 0;
	sigset_t all, saved;

	if (!s)
		return false;
	s->cap = cap;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (uint32_t i = 0; old && i < old->cap; i++) {
		const void *k = key_of(&old->e[i]);
		struct held *e;

		if (k == NULL || k == HELD_SPILL_TOMB || k == HELD_SPILL_CLAIMED)
			continue;
		for (e = spill_slot(s, k); e->lock; e = spill_next(s, e))
			;
		*e = old->e[i];
		n++;
	}
	atomic_store_explicit(&s->used, n, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&l->spill, s, memory_order_relaxed);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (old)
		pool_free(old, spill_bytes(old->cap));
	return true;
}

/*
 * Room for one more entry, probes kept short (live and removed slots at
 * most half the table); grows only while no other spill operation of this
 * thread is under way (held.h): pinned is 1, ours.
 */
static struct held_spill *spill_room(void)
{
	struct held_list *l = &held_tls;
	struct held_spill *s = atomic_load_explicit(&l->spill, memory_order_relaxed);
	uint32_t live, busy;

	if (s) {
		live = atomic_load_explicit(&s->used, memory_order_relaxed);
		busy = live + atomic_load_explicit(&s->tombs, memory_order_relaxed);
		if (2 * (busy + 1) <= s->cap)
			return s;
	} else {
		live = 0;
	}
	if (atomic_load_explicit(&l->pinned, memory_order_relaxed) != 1 || !held_key_ok)
		return NULL;
	if (!spill_rebuild(4 * (live + 1) > SPILL_MIN_CAP ? 1u << (32 - __builtin_clz(4 * (live + 1)))
						   : SPILL_MIN_CAP))
		return NULL;
	/* The thread-exit hook frees it (held_at_thread_exit): any non-NULL value. */
	pthread_setspecific(held_key, &held_tls);
	return atomic_load_explicit(&l->spill, memory_order_relaxed);
}

/* Claim a free slot for lock, fill it, name it: false if no room. */
static bool spill_add(const void *lock, enum held_mode mode, uintptr_t data)
{
	struct held_spill *s = spill_room();
	struct held *e;

	if (!s)
		return false;
	for (e = spill_slot(s, lock);; e = spill_next(s, e)) {
		const void *k = key_of(e);

		/* A CAS: a handler of this thread may be claiming the same slot. */
		if ((k == NULL || k == HELD_SPILL_TOMB) &&
		    __atomic_compare_exchange_n(&e->lock, &k, HELD_SPILL_CLAIMED, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	atomic_signal_fence(memory_order_seq_cst);
	e->data = data;
	e->state = HELD_STATE(mode, 0);
	atomic_signal_fence(memory_order_seq_cst);
	__atomic_store_n(&e->lock, lock, __ATOMIC_RELAXED);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_fetch_add_explicit(&s->used, 1, memory_order_relaxed);
	return true;
}

bool held_push_slow(const void *lock, enum held_mode mode, uintptr_t data)
{
	struct held_list *l = &held_tls;
	int saved_errno;
	bool ok;

	if (l->top == &held_unset[0]) {
		struct held *unset = (struct held *)&held_unset[0];

		/*
		 * First push: the inline array, by a CAS of top, one
		 * instruction: a handler of this thread that set the list up
		 * after our test may have returned holding entries, which a
		 * plain store of &entry[0] would drop.
		 */
		__atomic_compare_exchange_n(&l->top, &unset, &l->entry[0], false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		atomic_signal_fence(memory_order_seq_cst);
		return held_push_entry(lock, mode, data, false);
	}
	saved_errno = errno; /* mmap may set it; glibc's calls never do */
	held_init();
	held_pin();
	ok = spill_add(lock, mode, data);
	held_unpin();
	errno = saved_errno;
	return ok;
}

/*
 * Thread exit: free the spill (locks still held stay held).
 *
 * Other thread-specific data destructors may still unlock locks this
 * thread holds, and they run in key order, perhaps after this one: while
 * the spill has entries, keep it for the next round, up to the last round
 * glibc runs (PTHREAD_DESTRUCTOR_ITERATIONS).  Freeing it at once made
 * such unlocks fail with EPERM and left the locks held (found by
 * tests/stress/cancel_exit).  A hold a later destructor takes past that
 * is kept inline, or unlisted.
 */
static void held_at_thread_exit(void *value)
{
	struct held_list *l = &held_tls;
	struct held_spill *s = atomic_load_explicit(&l->spill, memory_order_relaxed);

	if (s && atomic_load_explicit(&s->used, memory_order_relaxed) > 0 &&
	    ++held_exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS &&
	    pthread_setspecific(held_key, value) == 0)
		return;
	atomic_store_explicit(&l->spill, NULL, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (s)
		pool_free(s, spill_bytes(s->cap));
}

pid_t held_self_refresh(void)
{
	held_tls.self = gettid(); /* never fails, leaves errno alone */
	return held_tls.self;
}

/*
 * fork(): the forking thread learns its id before (it may have taken write
 * locks without asking for it: glibc records the id itself) and keeps it
 * among the ids of its past, then takes the child's.  A fork without the
 * handlers (_Fork, a raw clone) leaves self stale: the first unlock of a
 * lock that then seems not ours asks the kernel again (rwlock.c).
 */
static void held_before_fork(void)
{
	held_self_refresh();
}

static void held_after_fork_in_child(void)
{
	struct held_list *l = &held_tls;

	memmove(&l->forked_from[1], &l->forked_from[0],
		(HELD_FORK_GENERATIONS - 1) * sizeof(l->forked_from[0]));
	l->forked_from[0] = l->self;
	held_self_refresh();
}

static void held_key_create(void)
{
	held_key_ok = pthread_key_create(&held_key, held_at_thread_exit) == 0;
	pthread_atfork(held_before_fork, NULL, held_after_fork_in_child);
}

void held_init(void)
{
	pthread_once(&held_key_once, held_key_create);
}
