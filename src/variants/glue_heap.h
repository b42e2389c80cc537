/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_heap.h - the glue shared by the variants whose lock lives in a
 * heap block (Cohort-RW, Per-CPU): variant.h's functions, written once
 * over the few the variant's own header defines before including this
 * one:
 *
 *   heap_lock_t                   the algorithm's lock (the block)
 *   heap_kind()                   what a new block needs (its size, reset
 *                                 and idle test): a struct block_kind
 *   heap_index(l)                 the caller's sub-lock or node in l, the
 *                                 per-acquisition word of its reads
 *   heap_read_lock(l, i, dl), heap_read_trylock(l, i), heap_read_unlock(l, i)
 *   heap_readers_in(l, i)         read holds of sub-lock or node i (a snapshot)
 *   heap_indices(l)               how many there are
 *   heap_write_lock(l, dl, name, id), heap_write_trylock(l), heap_write_unlock(l)
 *                                 (a writer's own per-acquisition data, if
 *                                 any, stays in its block; the blocking
 *                                 lock stores id in *name before its
 *                                 thread stops counting as a waiting
 *                                 writer: ba.h, ba_write_lock_named)
 *   heap_guest_ok(l)              the caller's read of l is a guest the
 *                                 glue lets in without touching l (ba.h,
 *                                 Guests); false where the algorithm lets
 *                                 such reads in itself (Cohort-RW)
 *   heap_is_idle(l)
 *   HEAP_READ_NOWAIT_OUT_OF_LINE  optional: variant_read_nowait out of
 *                                 line (where the read try-lock is long,
 *                                 so that the read exports keep a small
 *                                 frame)
 *
 * The lock's handle (heap_handle.h) holds the sealed block, attached on
 * first use; or, for a lock in shared memory or one that could not have
 * a block (no memory), the in-place mark (registry.h): such a lock is BA
 * in its own bytes, phase-fair, for its life.  Write holds are named in
 * the handle by thread id (handle.h), as BA names them, so they need no
 * list entry.  Every call may be the first of the process, before
 * libbravo's constructor: a block is built only after the settings and
 * the topology are read (rwlock.c loads first).
 */
#ifndef LIBBRAVO_GLUE_HEAP_H
#define LIBBRAVO_GLUE_HEAP_H
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "../../locks/ba.h"
#include "heap_handle.h"
#include "../interpose/held.h"
#include "topology.h"

/* The data of a guest read the glue lets in (never an index). */
#define HEAP_GUEST UINTPTR_MAX

/* Once, by rwlock.c's load (also when a first call comes before the constructor). */
static inline void variant_load(void)
{
	topology_load();
	registry_atfork();
}

static __attribute__((noinline)) heap_lock_t *heap_attach(pthread_rwlock_t *rw)
{
	struct block_kind kind = heap_kind();

	return registry_attach(rw, handle_block_slot(rw), &kind);
}

/* The lock's block, attached on first use; NULL: the lock runs in place. */
static inline heap_lock_t *heap_of(pthread_rwlock_t *rw)
{
	heap_lock_t *l = handle_sealed_block(rw);

	return __builtin_expect(l != NULL, 1) ? l : heap_attach(rw);
}

/* The in-place lock: BA in the handle's first bytes (heap_handle.h). */
static inline struct ba_lock *inplace_ba(pthread_rwlock_t *rw)
{
	return handle_ba(rw);
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_init(rw, attr); /* the kind kept for the program's sake only */
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	heap_lock_t *l = handle_sealed_block(rw);

	if (l)
		return heap_is_idle(l);
	return !registry_inplace(handle_block_slot(rw)) || ba_is_idle(inplace_ba(rw));
}

/*
 * EBUSY, changing nothing, if the lock is held or waited for.  A lock
 * without a (sealed) block is an unused or in-place lock: its block, if
 * any is remembered for the address, goes.
 */
static inline int variant_destroy(pthread_rwlock_t *rw)
{
	if (!variant_is_idle(rw))
		return EBUSY;
	if (!registry_inplace(handle_block_slot(rw)))
		registry_detach(rw, handle_block_slot(rw));
	return 0;
}

/* The class of a hold: the sub-lock or node it raised (0 in place). */
static inline uintptr_t variant_hold_class(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	return data;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
}

/* Held holds of an in-place lock are data 0; a guest touches nothing. */
static int inplace_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	if (ba_guest_ok(inplace_ba(rw))) {
		*data = HEAP_GUEST;
		return 0;
	}
	*data = 0;
	return ba_read_lock(inplace_ba(rw), dl);
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	heap_lock_t *l = heap_of(rw);

	if (__builtin_expect(l == NULL, 0))
		return inplace_read_lock(rw, data, dl);
	if (heap_guest_ok(l)) {
		*data = HEAP_GUEST;
		return 0;
	}
	*data = heap_index(l);
	return heap_read_lock(l, (unsigned)*data, dl);
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	heap_lock_t *l = heap_of(rw);
	bool guest;

	if (__builtin_expect(l != NULL, 1)) {
		*data = heap_index(l);
		if (heap_read_trylock(l, (unsigned)*data))
			return 0;
		guest = heap_guest_ok(l);
	} else {
		*data = 0;
		if (ba_read_trylock(inplace_ba(rw)))
			return 0;
		guest = ba_guest_ok(inplace_ba(rw));
	}
	if (!guest)
		return EBUSY;
	*data = HEAP_GUEST;
	return 0;
}

/* A read hold of the plain class (data 0), for a hold that cannot be listed (held.h). */
static inline int variant_read_lock_plain(pthread_rwlock_t *rw, const struct deadline *dl)
{
	heap_lock_t *l = heap_of(rw);

	return l ? heap_read_lock(l, 0, dl) : ba_read_lock(inplace_ba(rw), dl);
}

static inline int variant_read_trylock_plain(pthread_rwlock_t *rw)
{
	heap_lock_t *l = heap_of(rw);
	bool got = l ? heap_read_trylock(l, 0) : ba_read_trylock(inplace_ba(rw));

	return got ? 0 : EBUSY;
}

/*
 * What a read unlock releases (variant.h, VARIANT_READ_UNLOCK_TARGET):
 * the block, the lock's own bytes (in place), or NULL: nothing, a guest,
 * or a handle overwritten meanwhile (re-initialized, copied over).
 */
#define VARIANT_READ_UNLOCK_TARGET
static inline void *variant_read_unlock_target(pthread_rwlock_t *rw, uintptr_t data)
{
	heap_lock_t *l = handle_held_block(rw);

	if (__builtin_expect(data == HEAP_GUEST, 0))
		return NULL;
	if (l)
		return l;
	return registry_inplace(handle_block_slot(rw)) ? (void *)inplace_ba(rw) : NULL;
}

static inline void variant_read_unlock_at(void *target, pthread_rwlock_t *rw, uintptr_t data)
{
	if (target == (void *)inplace_ba(rw))
		ba_read_unlock(target);
	else if (target)
		heap_read_unlock(target, (unsigned)data);
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	variant_read_unlock_at(variant_read_unlock_target(rw, data), rw, data);
}

/*
 * The read the inline slow path takes without waiting and without a list
 * lookup (variant.h): the block's read try-lock.  It fails while the
 * caller holds the lock for writing (the writer holds every sub-lock or
 * node), and a second success by a reader is a second hold.  A lock
 * without a sealed block (first use, in place) takes the full path.
 */
#define VARIANT_READ_NOWAIT 1
#ifdef HEAP_READ_NOWAIT_OUT_OF_LINE
static __attribute__((noinline, unused)) enum read_nowait
#else
static inline enum read_nowait
#endif
variant_read_nowait(pthread_rwlock_t *rw, uintptr_t *data)
{
	heap_lock_t *l = handle_sealed_block(rw);

	if (__builtin_expect(l == NULL, 0))
		return READ_NOWAIT_MISS;
	*data = heap_index(l);
	return heap_read_trylock(l, (unsigned)*data) ? READ_NOWAIT_HELD : READ_NOWAIT_MISS;
}

/* Does the lock have a read hold of class cls (a snapshot)? */
static inline bool variant_read_held_class(pthread_rwlock_t *rw, uintptr_t cls)
{
	heap_lock_t *l = handle_sealed_block(rw);

	if (l)
		return cls < heap_indices(l) && heap_readers_in(l, (unsigned)cls) > 0;
	return cls == 0 && registry_inplace(handle_block_slot(rw)) &&
	       handle_writer(rw) == 0 && ba_read_held(inplace_ba(rw));
}

/*
 * The caller holds nothing on the lock: if some thread holds it for
 * reading, release one read hold (on a sub-lock or node with a reader
 * inside, its class in *cls) and return true; otherwise change nothing,
 * false.
 */
static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *cls)
{
	heap_lock_t *l = handle_sealed_block(rw);

	if (!l) {
		if (!variant_read_held_class(rw, 0))
			return false;
		*cls = 0;
		ba_read_unlock(inplace_ba(rw));
		return true;
	}
	for (unsigned i = 0; i < heap_indices(l); i++) {
		if (heap_readers_in(l, i)) {
			heap_read_unlock(l, i);
			*cls = i;
			return true;
		}
	}
	return false;
}

/* Write holds are named in the handle (handle.h), as BA names them. */
#define VARIANT_WRITE_OWNER 1

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	heap_lock_t *l = heap_of(rw);

	(void)data;
	if (!l)
		return ba_write_lock_named(inplace_ba(rw), dl, &rw->__data.__cur_writer, held_self());
	return heap_write_lock(l, dl, &rw->__data.__cur_writer, held_self());
}

/* The id read first, as glue_ba.h's try-lock does. */
static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	heap_lock_t *l = heap_of(rw);
	pid_t self = held_self();
	bool got = l ? heap_write_trylock(l) : ba_write_trylock(inplace_ba(rw));

	(void)data;
	if (!got)
		return EBUSY;
	handle_set_writer(rw, self);
	return 0;
}

/*
 * The write fast path (variant.h): the block's write try-lock, which fails
 * while the caller holds the lock in any mode (its read hold is counted
 * where the writer looks).  A lock without a sealed block takes the full
 * path.
 */
#define VARIANT_WRITE_FAST 1

static inline enum write_fast variant_write_fast(pthread_rwlock_t *rw)
{
	heap_lock_t *l = handle_sealed_block(rw);
	pid_t self = held_self();

	if (__builtin_expect(l == NULL, 0) || !heap_write_trylock(l))
		return WRITE_FAST_MISS;
	handle_set_writer(rw, self);
	return WRITE_FAST_HELD;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	heap_lock_t *l = handle_held_block(rw);

	(void)data;
	handle_set_writer(rw, 0);
	if (l)
		heap_write_unlock(l);
	else if (registry_inplace(handle_block_slot(rw)))
		ba_write_unlock(inplace_ba(rw));
}

#endif
