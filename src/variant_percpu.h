/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * variant_percpu.h - the Per-CPU variant: one BA sub-lock per online CPU
 * (locks/percpu.h) in a heap block.  A reader's per-acquisition word is the
 * sub-lock index it took, so it releases that one after a migration.
 *
 * Every call may be the first of the process, before libbravo's
 * constructor: the block is built only after the topology is read, and
 * the registry never reuses a block of another size.
 */
#ifndef LIBBRAVO_VARIANT_PERCPU_H
#define LIBBRAVO_VARIANT_PERCPU_H
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "../locks/percpu.h"
#include "config.h"
#include "heap_handle.h"
#include "topology.h"

static void percpu_reset(void *block, uintptr_t nsub)
{
	percpu_init(block, (unsigned)nsub);
}

static bool percpu_block_idle(void *block)
{
	return percpu_is_idle(block);
}

/* Once, by rwlock.c's load (also when a first call comes before the constructor). */
static inline void variant_load(void)
{
	topology_load();
	registry_atfork();
}

static __attribute__((noinline)) struct percpu_lock *percpu_attach(pthread_rwlock_t *rw)
{
	struct block_kind kind;

	kind = (struct block_kind){ percpu_size(topology.ncpus), topology.ncpus,
				    percpu_reset, percpu_block_idle };
	return registry_attach(rw, handle_block_slot(rw), &kind);
}

/* The lock's block, attached on first use; NULL: no memory. */
static inline struct percpu_lock *percpu_of(pthread_rwlock_t *rw)
{
	struct percpu_lock *l = handle_sealed_block(rw);

	return __builtin_expect(l != NULL, 1) ? l : percpu_attach(rw);
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
	handle_init(rw, attr); /* phase-fair whatever the kind */
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	struct percpu_lock *l = handle_sealed_block(rw);

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

/*
 * EBUSY, changing nothing, if the lock is held or waited for.  A lock
 * without a (sealed) block is an unused lock: its bytes are not written.
 */
static inline int variant_destroy(pthread_rwlock_t *rw)
{
	if (!variant_is_idle(rw))
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
	struct percpu_lock *l = handle_held_block(rw);

	if (l)
		percpu_read_unlock(l, (unsigned)data);
}

/*
 * The caller holds nothing on the lock: if some thread holds it for
 * reading, release one read hold (on a sub-lock with a reader inside, its
 * index in *data) and return true; otherwise change nothing, false.
 */
static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct percpu_lock *l = handle_sealed_block(rw);

	if (!l)
		return false;
	for (unsigned i = 0; i < l->nsub; i++) {
		if (percpu_readers_in(l, i)) {
			percpu_read_unlock(l, i);
			*data = i;
			return true;
		}
	}
	return false;
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
	struct percpu_lock *l = handle_held_block(rw);

	(void)data;
	if (l)
		percpu_write_unlock(l);
}

#endif
