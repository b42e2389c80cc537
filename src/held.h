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
 */
#ifndef LIBBRAVO_HELD_H
#define LIBBRAVO_HELD_H

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

struct held_list {
	uint32_t n;
	uint32_t cap;          /* capacity of spill; 0 while inline */
	struct held *spill;    /* all entries once the inline array overflowed */
	struct held inl[HELD_INLINE];
};

extern __thread struct held_list held_tls __attribute__((tls_model("initial-exec")));

static inline struct held *held_entries(struct held_list *l)
{
	return l->spill ? l->spill : l->inl;
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

/* A new entry for lock (count 1, data 0), or NULL if no memory. */
static inline struct held *held_push(const void *lock, enum held_mode mode)
{
	struct held_list *l = &held_tls;
	uint32_t cap = l->spill ? l->cap : HELD_INLINE;
	struct held *e;

	if (l->n == cap && !held_grow())
		return 0;
	e = &held_entries(l)[l->n++];
	e->lock = lock;
	e->mode = mode;
	e->count = 1;
	e->data = 0;
	return e;
}

/* Remove an entry returned by held_find/held_push (order is not kept). */
static inline void held_remove(struct held *e)
{
	struct held_list *l = &held_tls;

	*e = held_entries(l)[--l->n];
}

/* Drop every entry whose lock fails keep(lock) (after fork, in the child). */
void held_filter(bool (*keep)(const void *lock));

#endif
