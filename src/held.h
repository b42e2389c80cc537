/*
 * held.h - per-thread list of the rwlocks the thread holds.
 *
 * One entry per lock: mode, recursion count, and one word of per-acquisition
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
#include <stdint.h>

enum held_mode { HELD_READ = 1, HELD_WRITE = 2 };

struct held {
	const void *lock;
	uint32_t mode;
	uint32_t count; /* read re-entries + 1 */
	uintptr_t data;
};

#define HELD_INLINE 8

/* A heap array of entries; its capacity travels with it (one pointer store). */
struct held_spill {
	struct held_spill *retired_next;
	uint32_t cap;
	struct held e[];
};

struct held_list {
	uint32_t n;
	struct held_spill *spill;   /* all entries once the inline array overflowed */
	struct held_spill *retired; /* replaced spill arrays, freed at thread exit */
	struct held inl[HELD_INLINE];
};

extern __thread struct held_list held_tls __attribute__((tls_model("initial-exec")));

static inline struct held *held_entries(struct held_list *l)
{
	return l->spill ? l->spill->e : l->inl;
}

static inline struct held *held_find(const void *lock)
{
	struct held_list *l = &held_tls;
	struct held *e = held_entries(l);

	for (uint32_t i = l->n; i-- > 0;)
		if (e[i].lock == lock)
			return &e[i];
	return 0;
}

struct held *held_grow(void);
/* Once at load: the thread-exit hook, made outside any signal handler. */
void held_init(void);

/*
 * Record a lock just taken (count 1); false if no memory.  The slot is
 * reserved (lock NULL, which no lookup matches) before it is filled and
 * named: a handler on this thread pushes its own entries above it.  A
 * handler may also grow the array between two of these stores (copying
 * the slot half filled): then the fill is done again in the new array.
 */
static inline bool held_push(const void *lock, enum held_mode mode, uintptr_t data)
{
	struct held_list *l = &held_tls;
	uint32_t i = l->n;
	struct held *base;

	if (i == (l->spill ? l->spill->cap : HELD_INLINE) && !held_grow())
		return false;
	base = held_entries(l);
	base[i].lock = 0;
	atomic_signal_fence(memory_order_seq_cst);
	l->n = i + 1;
	do {
		atomic_signal_fence(memory_order_seq_cst);
		base = held_entries(l);
		base[i].mode = mode;
		base[i].count = 1;
		base[i].data = data;
		atomic_signal_fence(memory_order_seq_cst);
		base[i].lock = lock;
		atomic_signal_fence(memory_order_seq_cst);
	} while (__builtin_expect(base != held_entries(l), 0));
	return true;
}

/* Remove an entry returned by held_find (order is not kept). */
static inline void held_remove(struct held *e)
{
	struct held_list *l = &held_tls;
	struct held *last = &held_entries(l)[l->n - 1];

	if (e != last)
		*e = *last; /* a handler now sees the last entry twice: harmless */
	atomic_signal_fence(memory_order_release);
	l->n--;
}

/* Forget the caller's entry for lock, if any (init and destroy). */
static inline void held_forget(const void *lock)
{
	struct held *e = held_find(lock);

	if (e)
		held_remove(e);
}


#endif
