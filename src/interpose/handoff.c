/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * handoff.c - the table of handed-off read holds (see handoff.h).
 *
 * A handful of records at most in any real program; a linear array under
 * a mutex is all it needs.  The counter handoff_outstanding mirrors the
 * total, so the lock paths test one word and never take the mutex when
 * nothing was handed off.
 */
#include "handoff.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "pool.h"
#include "table_lock.h"

struct handoff {
	const void *lock;
	uintptr_t cls;
	uint32_t life;
	unsigned long count;
};

#define HANDOFF_IN_PLACE 64

_Atomic unsigned long handoff_outstanding;

static pthread_mutex_t handoff_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct handoff in_place[HANDOFF_IN_PLACE];
/* All under handoff_mutex. */
static struct handoff *table = in_place;
static size_t used, cap = HANDOFF_IN_PLACE, reserved;

static void drop(size_t i)
{
	atomic_fetch_sub_explicit(&handoff_outstanding, table[i].count, memory_order_relaxed);
	table[i] = table[--used];
}

/* lock's record of cls in life; records of lock's other lives are dropped. */
static struct handoff *find(const void *lock, uintptr_t cls, uint32_t life)
{
	struct handoff *found = NULL;

	for (size_t i = used; i-- > 0;) {
		if (table[i].lock != lock)
			continue;
		if (table[i].life != life)
			drop(i); /* moves the last record here: already looked at */
		else if (table[i].cls == cls)
			found = &table[i];
	}
	return found;
}

/* Twice the room, from the pool; false if no memory. */
static bool grow(void)
{
	struct handoff *t = pool_alloc(2 * cap * sizeof(*t));

	if (!t)
		return false;
	memcpy(t, table, used * sizeof(*t));
	if (table != in_place)
		pool_free(table, cap * sizeof(*t));
	table = t;
	cap *= 2;
	return true;
}

bool handoff_reserve(void)
{
	struct table_guard g;
	bool ok;

	table_lock(&handoff_mutex, &g);
	ok = used + reserved < cap || grow();
	if (ok)
		reserved++;
	table_unlock(&handoff_mutex, &g);
	return ok;
}

void handoff_unreserve(void)
{
	struct table_guard g;

	table_lock(&handoff_mutex, &g);
	reserved--;
	table_unlock(&handoff_mutex, &g);
}

void handoff_add(const void *lock, uintptr_t cls, uint32_t life)
{
	struct table_guard g;
	struct handoff *h;

	table_lock(&handoff_mutex, &g);
	reserved--;
	h = find(lock, cls, life);
	if (!h) {
		h = &table[used++]; /* reserved: there is room */
		*h = (struct handoff){ lock, cls, life, 0 };
	}
	h->count++;
	atomic_fetch_add_explicit(&handoff_outstanding, 1, memory_order_relaxed);
	table_unlock(&handoff_mutex, &g);
}

bool handoff_take(const void *lock, uintptr_t cls, uint32_t life)
{
	struct table_guard g;
	struct handoff *h;
	bool took = false;

	if (!handoff_any())
		return false;
	table_lock(&handoff_mutex, &g);
	h = find(lock, cls, life);
	if (h) {
		took = true;
		atomic_fetch_sub_explicit(&handoff_outstanding, 1, memory_order_relaxed);
		if (--h->count == 0)
			*h = table[--used];
	}
	table_unlock(&handoff_mutex, &g);
	return took;
}

unsigned long handoff_count(const void *lock, uintptr_t cls, uint32_t life)
{
	struct table_guard g;
	struct handoff *h;
	unsigned long n = 0;

	if (!handoff_any())
		return 0;
	table_lock(&handoff_mutex, &g);
	h = find(lock, cls, life);
	if (h)
		n = h->count;
	table_unlock(&handoff_mutex, &g);
	return n;
}

void handoff_forget(const void *lock)
{
	struct table_guard g;

	if (!handoff_any())
		return;
	table_lock(&handoff_mutex, &g);
	for (size_t i = used; i-- > 0;)
		if (table[i].lock == lock)
			drop(i);
	table_unlock(&handoff_mutex, &g);
}

/* Held across fork (only the forking thread runs these): see table_lock.h. */
static struct table_guard fork_guard;

static void handoff_fork_prepare(void)
{
	table_lock(&handoff_mutex, &fork_guard);
}

static void handoff_fork_resume(void)
{
	table_unlock(&handoff_mutex, &fork_guard);
}

void handoff_atfork(void)
{
	pthread_atfork(handoff_fork_prepare, handoff_fork_resume, handoff_fork_resume);
}
