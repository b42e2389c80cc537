/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * held.h - per-thread list of the rwlocks the thread holds for reading.
 *
 * One entry per lock: mode, read re-entries, and one word of per-acquisition
 * data handed from the lock to its unlock (the BRAVO slot, the Per-CPU index,
 * the Cohort node), so the unlock never recomputes it after a migration.
 * The list also answers POSIX's questions: does this thread hold the lock,
 * and how (EDEADLK, EBUSY, EPERM), and lets a reader re-enter a lock it
 * already reads without touching it.  Write holds are not listed: every
 * variant names its writer in the lock (handle.h), as glibc does.
 *
 * Where entries live:
 *  - the first HELD_INLINE in TLS, a stack (push, pop, and the most recent
 *    entry are a few instructions: the fast paths use only these);
 *  - past them, a hash table of the thread's own (the spill), open
 *    addressing keyed by the lock's address, grown by doubling from
 *    mmap'd memory (pool.h): finding, adding and removing an entry cost
 *    O(1) however many locks the thread holds;
 *  - when the spill cannot grow (no memory), a hold is kept *unlisted*: it
 *    is taken as a hold of the lock's plain class (data 0: the lock
 *    underneath for BRAVO, node or sub-lock 0 for Cohort-RW and Per-CPU),
 *    which any unlock may release, and only counted; the unlock of a lock
 *    that has no entry releases one such hold.  What that costs is said
 *    in libbravo(7), MEMORY: a re-entry of an unlisted hold goes to the
 *    lock (behind a waiting writer, under a phase-fair or writer-preferring
 *    lock), and a read-then-write is not told EDEADLK.  No lock call fails
 *    for lack of memory.
 *
 * Signal handlers may lock and unlock rwlocks too (it works with glibc), so
 * the list is kept consistent at every instruction as seen from a handler
 * running on the same thread:
 *  - inline: a new entry is reserved (HELD_RESERVED, which no lookup
 *    matches) and named last, a removal moves the most recent entry down
 *    before the top drops (compiler fences order that for the same
 *    thread); the array never moves, and it is set up by one CAS of the
 *    top;
 *  - spill: an entry is added by claiming a free slot with a CAS (a
 *    handler may be claiming too), filling it and naming it last, and
 *    removed by one store of a tombstone.  The table moves only when it
 *    grows, which happens with every signal blocked and only while no code
 *    of this thread below a handler is inside a spill operation: those pin
 *    the table (held_pin) for as long as they keep an entry pointer, and
 *    a handler's push that would need to grow it meanwhile keeps its hold
 *    unlisted instead.
 * Only the owning thread ever touches its list.
 */
#ifndef LIBBRAVO_HELD_H
#define LIBBRAVO_HELD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../locks/hidden.h"

/*
 * HELD_FAST marks a read entry pushed by rwlock.c's inline fast path (its
 * data is a variant fast hold): the inline unlock recognizes "a single
 * fast read hold" by one 64-bit compare of the state word.  HELD_WRITE is
 * only ever a request's mode: write holds are not listed.
 */
enum held_mode { HELD_READ = 1, HELD_WRITE = 2, HELD_FAST = 4 };

struct held {
	const void *lock;
	uintptr_t data;
	union {
		struct {
			uint32_t mode;      /* HELD_READ, perhaps | HELD_FAST */
			uint32_t reentries; /* read re-entries (holds - 1) */
		};
		uint64_t state;
	};
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HELD_STATE(mode, reentries) ((uint64_t)(mode) | (uint64_t)(reentries) << 32)
#else
#define HELD_STATE(mode, reentries) ((uint64_t)(mode) << 32 | (uint64_t)(reentries))
#endif

/* HELD_READ or HELD_WRITE. */
static inline enum held_mode held_mode_of(const struct held *e)
{
	return (enum held_mode)(e->mode & (HELD_READ | HELD_WRITE));
}

#define HELD_INLINE 8
/* Generations of fork() whose write holds a child can still adopt. */
#define HELD_FORK_GENERATIONS 4

/* The spill: a hash table of entries (see the top); a slot's lock NULL: empty. */
struct held_spill {
	uint32_t cap;           /* slots, a power of two */
	_Atomic uint32_t used;  /* entries */
	_Atomic uint32_t tombs; /* removed entries' slots, not reusable as empty */
	uint32_t pad;
	struct held e[];
};

/* Keys of spill slots that are no lock (lock addresses are above them). */
#define HELD_SPILL_TOMB ((const void *)1)    /* removed: probing goes on */
#define HELD_SPILL_CLAIMED ((const void *)2) /* being filled */

/*
 * Keys of inline entries that are no lock.  A lookup of NULL (an unlock
 * of NULL) stops at the bottom; it matches no entry, a reserved one
 * included.
 */
#define HELD_BOTTOM NULL                /* below the first entry: the list is empty */
#define HELD_RESERVED ((const void *)3) /* pushed, not yet filled */
#define HELD_WALL ((const void *)5)     /* above the last: no room inline */

/*
 * The inline entries are entry[1 .. HELD_INLINE], a stack whose most
 * recent entry top points to; entry[0] is the bottom and the one past the
 * last a wall, markers that no lock's address matches (a NULL unlock finds
 * the bottom on an empty list, whose state is no hold's).  So the fast paths find the
 * most recent entry, test for room (the entry above top is the wall) and
 * pop, each with one load of top and no count or bounds; the list is
 * empty inline when a bottom is on top.  Until the thread's first push
 * top points to held_unset, a bottom with a wall above it in read-only
 * memory; that push points it to &entry[0] by a CAS, so that a handler's
 * own set-up and the entries it kept are not undone.
 */
struct held_list {
	struct held *top;           /* the most recent inline entry, or a bottom */
	pid_t self;                 /* gettid(), or -1 (no lock names it) until asked */
	pid_t forked_from[HELD_FORK_GENERATIONS]; /* self in the parent, grandparent...; 0: none */
	struct held_spill *_Atomic spill; /* entries past the inline ones; NULL: none yet */
	_Atomic uint32_t pinned;    /* spill operations under way on this thread */
	_Atomic uint32_t unlisted;  /* holds kept unlisted (no memory) */
	_Atomic uint32_t unlisted_guests; /* guest reads kept unlisted (wait.h) */
	struct held entry[HELD_INLINE + 2]; /* the bottom, the entries, the wall */
};

/* A thread's top before its first push: {bottom, wall}. */
extern const struct held held_unset[2] LIBBRAVO_HIDDEN;

extern __thread struct held_list held_tls
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/* e is one of the list's inline entries (not the spill's). */
static inline bool held_inline(const struct held_list *l, const struct held *e)
{
	return (uintptr_t)e - (uintptr_t)&l->entry[1] < HELD_INLINE * sizeof(struct held);
}

struct held *held_spill_find(const void *lock);

/*
 * The caller's entry for lock, or NULL.  One in the spill stays valid only
 * while the caller pins (held_pin): take both around the find and every
 * use of the entry.
 */
static inline struct held *held_find(const void *lock)
{
	struct held_list *l = &held_tls;
	struct held_spill *s;

	for (struct held *e = l->top; e->lock != HELD_BOTTOM; e--)
		if (e->lock == lock)
			return e;
	s = atomic_load_explicit(&l->spill, memory_order_relaxed);
	if (s && atomic_load_explicit(&s->used, memory_order_relaxed))
		return held_spill_find(lock);
	return 0;
}

/*
 * Keep the spill where it is while an entry pointer is in use (see the
 * top).  A load and a store, not an atomic RMW: only this thread and its
 * handlers touch the count, and a handler leaves it as it found it.
 */
static inline void held_pin(void)
{
	uint32_t n = atomic_load_explicit(&held_tls.pinned, memory_order_relaxed);

	atomic_store_explicit(&held_tls.pinned, n + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void held_unpin(void)
{
	uint32_t n;

	atomic_signal_fence(memory_order_seq_cst);
	n = atomic_load_explicit(&held_tls.pinned, memory_order_relaxed);
	atomic_store_explicit(&held_tls.pinned, n - 1, memory_order_relaxed);
}

/*
 * The caller's spill has no entry (or there is none).  Its count is read
 * pinned: a signal handler may grow the spill, freeing the old table,
 * between the load of the pointer and the read through it.
 */
static inline bool held_spill_none(void)
{
	struct held_spill *s;
	bool none;

	if (!atomic_load_explicit(&held_tls.spill, memory_order_relaxed))
		return true;
	held_pin();
	s = atomic_load_explicit(&held_tls.spill, memory_order_relaxed);
	none = !s || !atomic_load_explicit(&s->used, memory_order_relaxed);
	held_unpin();
	return none;
}

/* The caller lists no hold inline (it may in the spill): a bottom is on top. */
static inline bool held_none_inline(void)
{
	return held_tls.top->lock == HELD_BOTTOM;
}

/* The calling thread has forked: locks may name its ids before the fork (held_forked_from). */
static inline bool held_forked(void)
{
	return held_tls.forked_from[0] != 0;
}

/* The caller lists no hold at all, inline or in the spill. */
static inline bool held_none(void)
{
	struct held_list *l = &held_tls;

	/* One test for the common case: no entry (the bottom's key is NULL) and no spill at all. */
	if (__builtin_expect(((uintptr_t)l->top->lock |
			      (uintptr_t)atomic_load_explicit(&l->spill, memory_order_relaxed)) == 0, 1))
		return true;
	return held_none_inline() && held_spill_none();
}

/* Set the list up (the first push) or add to the spill; false if no memory. */
bool held_push_slow(const void *lock, enum held_mode mode, uintptr_t data);
/* Once at load: the thread-exit and fork hooks, made outside any signal handler. */
void held_init(void);

/* held_self's slow path: ask the kernel (the first time, or after a fork without handlers). */
pid_t held_self_refresh(void);

/* The id a lock that names its writer records for this thread. */
static inline pid_t held_self(void)
{
	pid_t id = held_tls.self;

	return __builtin_expect(id > 0, 1) ? id : held_self_refresh();
}

/* True if writer, an id a lock names, was this thread's before a fork. */
static inline bool held_forked_from(pid_t writer)
{
	struct held_list *l = &held_tls;

	for (int i = 0; i < HELD_FORK_GENERATIONS && l->forked_from[i]; i++)
		if (l->forked_from[i] == writer)
			return true;
	return false;
}

/*
 * Record a read hold just taken (no re-entry); false if no memory (or,
 * with grow false, no room inline: the fast paths do not grow the list).
 * The entry is reserved (HELD_RESERVED, which no lookup matches) before
 * it is made the top, then filled and named: a handler on this thread
 * pushes its own entries above it.
 */
static inline __attribute__((always_inline)) bool
held_push_entry(const void *lock, enum held_mode mode, uintptr_t data, bool grow)
{
	struct held_list *l = &held_tls;
	struct held *e = l->top + 1;

	if (__builtin_expect(e->lock == HELD_WALL, 0))
		return grow && held_push_slow(lock, mode, data);
	e->lock = HELD_RESERVED;
	atomic_signal_fence(memory_order_seq_cst);
	l->top = e;
	atomic_signal_fence(memory_order_seq_cst);
	e->data = data;
	e->state = HELD_STATE(mode, 0);
	atomic_signal_fence(memory_order_seq_cst);
	e->lock = lock;
	atomic_signal_fence(memory_order_seq_cst);
	return true;
}

static inline bool held_push(const void *lock, enum held_mode mode, uintptr_t data)
{
	return held_push_entry(lock, mode, data, true);
}

static inline bool held_push_fast(const void *lock, enum held_mode mode, uintptr_t data)
{
	return held_push_entry(lock, mode, data, false);
}

/* The most recent inline entry if it is lock's, else NULL. */
static inline struct held *held_top_of(const void *lock)
{
	struct held *e = held_tls.top;

	return e->lock == lock ? e : 0;
}

/* Remove top, the most recent inline entry. */
static inline void held_pop(struct held *top)
{
	held_tls.top = top - 1;
	atomic_signal_fence(memory_order_seq_cst);
}

void held_spill_remove(struct held *e);

/* Remove an entry returned by held_find (order is not kept). */
static inline void held_remove(struct held *e)
{
	struct held_list *l = &held_tls;
	struct held *top = l->top;

	if (!held_inline(l, e)) {
		held_spill_remove(e);
		return;
	}
	if (e != top)
		*e = *top; /* a handler now sees the top entry twice: harmless */
	atomic_signal_fence(memory_order_release);
	l->top = top - 1;
}

/* Forget the caller's entry for lock, if any (init and destroy). */
static inline void held_forget(const void *lock)
{
	struct held *e;

	held_pin();
	e = held_find(lock);
	if (e)
		held_remove(e);
	held_unpin();
}

/* A hold kept unlisted (see the top). */
static inline void held_unlisted_add(void)
{
	atomic_fetch_add_explicit(&held_tls.unlisted, 1, memory_order_relaxed);
}

/* One unlisted hold fewer; false if there was none. */
static inline bool held_unlisted_take(void)
{
	uint32_t n = atomic_load_explicit(&held_tls.unlisted, memory_order_relaxed);

	while (n && !atomic_compare_exchange_weak_explicit(&held_tls.unlisted, &n, n - 1,
							    memory_order_relaxed,
							    memory_order_relaxed))
		;
	return n != 0;
}

#endif
