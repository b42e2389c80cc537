/*
 * variant_percpu.c - the Per-CPU variant: one BA sub-lock per online CPU
 * (locks/percpu.h) in a heap block.  A reader's per-acquisition word is the
 * sub-lock index it took, so it releases that one after a migration.
 */
#ifndef LIBBRAVO_VARIANT_PERCPU_H
#define LIBBRAVO_VARIANT_PERCPU_H
#include <errno.h>
#include <stdio.h>

#include "../locks/percpu.h"
#include "heap_handle.h"
#include "topology.h"

static const char variant_name[] = "percpu";

static void percpu_reset(void *block)
{
	percpu_init(block, topology.ncpus);
}

static struct percpu_lock *percpu_of(pthread_rwlock_t *rw)
{
	return handle_block(rw, percpu_size(topology.ncpus), percpu_reset);
}

static inline void variant_load(void)
{
	topology_load();
	registry_atfork();
}

static inline const char *variant_detail(void)
{
	static char detail[64];

	snprintf(detail, sizeof(detail), "sublocks=%u lock_bytes=%zu",
		 topology.ncpus, percpu_size(topology.ncpus));
	return detail;
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_heap_init(rw, attr); /* phase-fair whatever the kind */
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	struct percpu_lock *l = handle_held_block(rw);

	return !l || percpu_is_idle(l);
}

/* The class of a hold: the sub-lock or node it raised. */
static inline uintptr_t variant_hold_class(uintptr_t data)
{
	return data;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
}

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	(void)data;
	return false; /* TODO(i12-heap): release a read hold on another reader's behalf */
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	struct percpu_lock *l = handle_held_block(rw);

	if (l && !percpu_is_idle(l))
		return EBUSY;
	registry_detach(rw, handle_block_slot(rw));
	return 0;
}

/* The lock's block, and the caller's sub-lock index in *data; NULL: no memory. */
static inline struct percpu_lock *percpu_here(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct percpu_lock *l = percpu_of(rw);

	if (l)
		*data = percpu_index(l, topology_cpu());
	return l;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct percpu_lock *l = percpu_here(rw, data);

	return l ? percpu_read_lock(l, (unsigned)*data, dl) : EAGAIN;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct percpu_lock *l = percpu_here(rw, data);

	if (!l)
		return EAGAIN;
	return percpu_read_trylock(l, (unsigned)*data) ? 0 : EBUSY;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	percpu_read_unlock(handle_held_block(rw), (unsigned)data);
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct percpu_lock *l = percpu_of(rw);

	(void)data;
	return l ? percpu_write_lock(l, dl) : EAGAIN;
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct percpu_lock *l = percpu_of(rw);

	(void)data;
	if (!l)
		return EAGAIN;
	return percpu_write_trylock(l) ? 0 : EBUSY;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	percpu_write_unlock(handle_held_block(rw));
}

#endif
