/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * held.h - per-thread list of the rwlocks the thread holds.
 *
 * One entry per lock: mode, read re-entries, and one word of per-acquisition
 * data handed from the lock to its unlock (the BRAVO slot, the Per-CPU index,
 * the Cohort node), so the unlock never recomputes it after a migration.
 * The list also answers POSIX's questions: does this thread hold the lock,
 * and how (EDEADLK, EBUSY, EPERM), and lets a reader re-enter a lock it
 * already reads without touching it.
 *
 * The first HELD_INLINE entries live in TLS (no allocation on the lock
 * path); more spill to a heap array that doubles as needed and is freed at
 * thread exit.  Lookups scan from the most recent entry.  Only the owning
 * thread ever touches its list.
 *
 * Signal handlers may lock and unlock rwlocks too (it works with glibc), so
 * the list is kept consistent at every instruction as seen from a handler
 * running on the same thread: a new entry's slot is reserved empty and
 * named last, a removal moves the last entry down before the count drops
 * (compiler-only fences order that for the same thread), arrays come from
 * mmap, not malloc (a handler may grow the list while the thread is in
 * malloc), and a grown array is not unmapped before the thread exits (the
 * interrupted code may still be reading it).  The callers hold no entry
 * pointer across a lock acquisition: rwlock.c pushes an entry only after
 * the lock is taken and removes it before the lock is released.
 */
#ifndef LIBBRAVO_HELD_H
#define LIBBRAVO_HELD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../locks/hidden.h"

/*
 * HELD_FAST marks a read entry pushed by rwlock.c's inline fast path (its
 * data is a variant fast hold): the inline unlock recognizes "a single
 * fast read hold" by one 64-bit compare of the state word.  HELD_PROFILED
 * marks a write entry pushed with the profile on (profile.h): no compare
 * of the inline unlock matches it, so its unlock takes the full path,
 * which ends the hold's timing.
 */
enum held_mode { HELD_READ = 1, HELD_WRITE = 2, HELD_FAST = 4, HELD_PROFILED = 8 };

struct held {
	const void *lock;
	uintptr_t data;
	union {
		struct {
			uint32_t mode;      /* HELD_READ or HELD_WRITE, perhaps | HELD_FAST or HELD_PROFILED */
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

/* A heap array of entries; its capacity travels with it (one pointer store). */
struct held_spill {
	struct held_spill *retired_next;
	uint32_t cap;
	struct held e[];
};

/*
 * The entries are base[0 .. used), counted in bytes so that the common path
 * adds instead of multiplying; room is the bytes the array has.  Both stay
 * zero until the first push, which then finds no room and sets the list
 * up.  Offsets, not pointers, say where the top is: a handler on this
 * thread that grows (moves) the array between two stores of the
 * interrupted push leaves the offset valid in the new array.
 */
struct held_list {
	size_t used;                /* bytes of entries in use */
	size_t room;                /* bytes base has room for; 0 before the first push */
	struct held *base;          /* inl, or spill->e once that overflowed */
	pid_t self;                 /* gettid(), or -1 (no lock names it) until asked */
	pid_t forked_from[HELD_FORK_GENERATIONS]; /* self in the parent, grandparent...; 0: none */
	struct held_spill *spill;   /* all entries once the inline array overflowed */
	struct held_spill *retired; /* replaced spill arrays, freed at thread exit */
	struct held inl[HELD_INLINE];
};

extern __thread struct held_list held_tls
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

static inline struct held *held_at(struct held *base, size_t off)
{
	return (struct held *)(void *)((char *)base + off);
}

static inline uint32_t held_count(const struct held_list *l)
{
	return (uint32_t)(l->used / sizeof(struct held));
}

static inline struct held *held_find(const void *lock)
{
	struct held_list *l = &held_tls;
	struct held *e = l->base;

	for (uint32_t i = held_count(l); i-- > 0;)
		if (e[i].lock == lock)
			return &e[i];
	return 0;
}

struct held *held_grow(void);
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
 * Record a lock just taken (no re-entry); false if no memory (or, with grow
 * false, no room: the fast path does not grow the array).  The entry is
 * reserved (lock NULL, which no lookup matches) before it is filled and
 * named: a handler on this thread pushes its own entries above it.  A
 * handler may also grow the array between two of these stores (copying
 * the entry half filled): then the fill is done again in the new array.
 */
static inline __attribute__((always_inline)) bool
held_push_entry(const void *lock, enum held_mode mode, uintptr_t data, bool grow)
{
	struct held_list *l = &held_tls;
	size_t off = l->used;
	struct held *base, *e;

	if (__builtin_expect(off == l->room, 0) && (!grow || !held_grow()))
		return false;
	base = l->base;
	e = held_at(base, off);
	e->lock = 0;
	atomic_signal_fence(memory_order_seq_cst);
	l->used = off + sizeof(struct held);
	for (;;) {
		atomic_signal_fence(memory_order_seq_cst);
		e->data = data;
		e->state = HELD_STATE(mode, 0);
		atomic_signal_fence(memory_order_seq_cst);
		e->lock = lock;
		atomic_signal_fence(memory_order_seq_cst);
		if (__builtin_expect(base == l->base, 1))
			return true;
		base = l->base; /* a handler grew the array: fill the copy */
		e = held_at(base, off);
	}
}

static inline bool held_push(const void *lock, enum held_mode mode, uintptr_t data)
{
	return held_push_entry(lock, mode, data, true);
}

static inline bool held_push_fast(const void *lock, enum held_mode mode, uintptr_t data)
{
	return held_push_entry(lock, mode, data, false);
}

/* The most recent entry if it is lock's, else NULL. */
static inline struct held *held_top_of(const void *lock)
{
	struct held_list *l = &held_tls;
	size_t off = l->used;
	struct held *e;

	if (!off)
		return 0; /* base may be NULL: no pointer arithmetic on it */
	e = held_at(l->base, off - sizeof(struct held));
	return e->lock == lock ? e : 0;
}

/* Remove the most recent entry. */
static inline void held_pop(void)
{
	struct held_list *l = &held_tls;

	l->used -= sizeof(struct held);
	atomic_signal_fence(memory_order_seq_cst);
}

/* Remove an entry returned by held_find (order is not kept). */
static inline void held_remove(struct held *e)
{
	struct held_list *l = &held_tls;
	size_t off = l->used - sizeof(struct held);
	struct held *last = held_at(l->base, off);

	if (e != last)
		*e = *last; /* a handler now sees the last entry twice: harmless */
	atomic_signal_fence(memory_order_release);
	l->used = off;
}

/* Forget the caller's entry for lock, if any (init and destroy). */
static inline void held_forget(const void *lock)
{
	struct held *e = held_find(lock);

	if (e)
		held_remove(e);
}

#endif
