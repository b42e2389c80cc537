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
#include <signal.h>
#include <stdlib.h>

#include "table_lock.h"

struct handoff {
	const void *lock;
	uintptr_t cls;
	unsigned long count;
};

_Atomic unsigned long handoff_outstanding;

/* Taken with every signal blocked (table_lock.h). */
static pthread_mutex_t handoff_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct handoff *table;
static size_t used, cap;

static struct handoff *find(const void *lock, uintptr_t cls)
{
	for (size_t i = 0; i < used; i++)
		if (table[i].lock == lock && table[i].cls == cls)
			return &table[i];
	return NULL;
}

static void drop(struct handoff *h)
{
	*h = table[--used];
}

void handoff_add(const void *lock, uintptr_t cls)
{
	sigset_t saved;
	int saved_errno = errno;
	struct handoff *h;

	table_lock(&handoff_mutex, &saved);
	h = find(lock, cls);
	if (!h && used == cap) {
		size_t ncap = cap ? cap * 2 : 16;
		struct handoff *t = realloc(table, ncap * sizeof(*t));

		if (t) {
			table = t;
			cap = ncap;
		}
	}
	if (!h && used < cap) {
		h = &table[used++];
		*h = (struct handoff){ lock, cls, 0 };
	}
	if (h) {
		h->count++;
		atomic_fetch_add_explicit(&handoff_outstanding, 1, memory_order_relaxed);
	}
	table_unlock(&handoff_mutex, &saved);
	errno = saved_errno;
}

bool handoff_take(const void *lock, uintptr_t cls)
{
	sigset_t saved;
	struct handoff *h;
	bool took = false;

	if (!handoff_any())
		return false;
	table_lock(&handoff_mutex, &saved);
	h = find(lock, cls);
	if (h) {
		took = true;
		atomic_fetch_sub_explicit(&handoff_outstanding, 1, memory_order_relaxed);
		if (--h->count == 0)
			drop(h);
	}
	table_unlock(&handoff_mutex, &saved);
	return took;
}

unsigned long handoff_count(const void *lock, uintptr_t cls)
{
	sigset_t saved;
	struct handoff *h;
	unsigned long n = 0;

	if (!handoff_any())
		return 0;
	table_lock(&handoff_mutex, &saved);
	h = find(lock, cls);
	if (h)
		n = h->count;
	table_unlock(&handoff_mutex, &saved);
	return n;
}

void handoff_forget(const void *lock)
{
	sigset_t saved;
	if (!handoff_any())
		return;
	table_lock(&handoff_mutex, &saved);
	for (size_t i = used; i-- > 0;) {
		if (table[i].lock == lock) {
			atomic_fetch_sub_explicit(&handoff_outstanding, table[i].count,
						  memory_order_relaxed);
			drop(&table[i]);
		}
	}
	table_unlock(&handoff_mutex, &saved);
}

static void handoff_lock(void)
{
	pthread_mutex_lock(&handoff_mutex);
}

static void handoff_unlock(void)
{
	pthread_mutex_unlock(&handoff_mutex);
}

void handoff_atfork(void)
{
	pthread_atfork(handoff_lock, handoff_unlock, handoff_unlock);
}
