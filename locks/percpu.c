/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * percpu.c - Per-CPU lock writers (see percpu.h).
 */
#include "percpu.h"

#include <errno.h>
#include <string.h>

void percpu_init(struct percpu_lock *l, unsigned nsub)
{
	memset(l, 0, percpu_size(nsub));
	l->nsub = nsub; /* >= 1 */
}

static void percpu_write_release(struct percpu_lock *l, unsigned upto)
{
	while (upto-- > 0)
		ba_write_unlock(&l->sub[upto].ba);
}

int percpu_write_lock(struct percpu_lock *l, const struct deadline *dl)
{
	return percpu_write_lock_named(l, dl, NULL, 0);
}

/* Over every sub-lock, racy snapshots: readers inside; departures (a sum, modulo 2^32). */
static uint32_t percpu_sum(const struct percpu_lock *l, uint32_t (*of)(const void *))
{
	uint32_t n = 0;

	for (unsigned i = 0; i < l->nsub; i++)
		n += of(&l->sub[i].ba);
	return n;
}

static uint32_t percpu_inside(const void *arg)
{
	return percpu_sum(arg, ba_readers_of);
}

static uint32_t percpu_departed(const void *arg)
{
	return percpu_sum(arg, ba_departed_of);
}

static const struct wait_readers percpu_readers = { percpu_inside, percpu_departed };

int percpu_write_lock_named(struct percpu_lock *l, const struct deadline *dl, int *name, int id)
{
	const void *pending = NULL;
	unsigned i;

	for (i = 0; i < l->nsub; i++) {
		uint32_t ticket;

		/* Only the first may hold back (ba.h): later ones would keep readers out meanwhile. */
		if (ba_write_begin(&l->sub[i].ba, &ticket, dl, i == 0 ? &percpu_readers : NULL, l))
			goto timeout;
		atomic_store_explicit(&l->sub[i].wticket, ticket, memory_order_relaxed);
		/*
		 * Sub-lock 0 is ours: no other writer can be inside (an inside
		 * writer holds every sub-lock), so a handler's read on this
		 * thread gets in (wait.h).
		 */
		if (i == 0)
			pending = wait_writer_pending_set(l);
	}
	for (unsigned j = 0; j < l->nsub; j++)
		if (ba_write_wait(&l->sub[j].ba,
				  atomic_load_explicit(&l->sub[j].wticket, memory_order_relaxed), dl))
			goto timeout;
	if (name)
		__atomic_store_n(name, id, __ATOMIC_RELAXED); /* named before the mark goes */
	wait_writer_pending_restore(pending);
	return 0;
timeout:
	if (i > 0)
		wait_writer_pending_restore(pending);
	percpu_write_release(l, i);
	return ETIMEDOUT;
}

bool percpu_write_trylock(struct percpu_lock *l)
{
	for (unsigned i = 0; i < l->nsub; i++) {
		if (!ba_write_trylock(&l->sub[i].ba)) {
			percpu_write_release(l, i);
			return false;
		}
	}
	return true;
}

void percpu_write_unlock(struct percpu_lock *l)
{
	/* Reverse order: the lowest sub-lock, which writers queue on, goes last. */
	percpu_write_release(l, l->nsub);
}

bool percpu_is_idle(struct percpu_lock *l)
{
	for (unsigned i = 0; i < l->nsub; i++)
		if (!ba_is_idle(&l->sub[i].ba))
			return false;
	return true;
}
