/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_ba.h - the BA variant: the phase-fair lock inline in the handle.
 * Phase-fair whatever kind the program asks for.
 */
#ifndef LIBBRAVO_GLUE_BA_H
#define LIBBRAVO_GLUE_BA_H
#include <errno.h>
#include <string.h>

#include "../../locks/ba.h"
#include "../interpose/handle.h"
#include "../interpose/held.h"

static inline void variant_load(void)
{
}

static inline const char *variant_detail(void)
{
	return "";
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_init(rw, attr); /* the kind kept for the program's sake only */
	return 0;
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	return ba_is_idle(handle_ba(rw)) ? 0 : EBUSY;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	return ba_is_idle(handle_ba(rw));
}

/* Holds are interchangeable: one class. */
static inline uintptr_t variant_hold_class(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
	return 0;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
}

/* Does the lock have a read hold (of its one class)?  A snapshot. */
static inline bool variant_read_held_class(pthread_rwlock_t *rw, uintptr_t cls)
{
	return cls == 0 && handle_writer(rw) == 0 && ba_read_held(handle_ba(rw));
}

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *cls)
{
	*cls = 0;
	if (!variant_read_held_class(rw, 0))
		return false;
	ba_read_unlock(handle_ba(rw));
	return true;
}

/*
 * The data of a guest read: a handler's read of the lock whose writer
 * side its own thread holds while it waits (wait.h); it touches nothing.
 */
#define BA_GUEST UINTPTR_MAX

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	if (ba_guest_ok(handle_ba(rw))) {
		*data = BA_GUEST;
		return 0;
	}
	*data = 0;
	return ba_read_lock(handle_ba(rw), dl);
}

/* Every read hold is of the plain class already (held.h). */
static inline int variant_read_lock_plain(pthread_rwlock_t *rw, const struct deadline *dl)
{
	return ba_read_lock(handle_ba(rw), dl);
}

static inline int variant_read_trylock_plain(pthread_rwlock_t *rw)
{
	return ba_read_trylock(handle_ba(rw)) ? 0 : EBUSY;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	*data = 0;
	if (ba_read_trylock(handle_ba(rw)))
		return 0;
	if (!ba_guest_ok(handle_ba(rw)))
		return EBUSY;
	*data = BA_GUEST;
	return 0;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	if (data != BA_GUEST)
		ba_read_unlock(handle_ba(rw));
}

/* A read hold of data 0 (all but guests): released inline (variant.h). */
#define VARIANT_READ_UNLOCK_UNDER 1

static inline __attribute__((always_inline)) int variant_read_unlock_under(pthread_rwlock_t *rw)
{
	return ba_read_unlock(handle_ba(rw));
}

/* The slow path's read that does not wait (variant.h): BA's read try-lock. */
#define VARIANT_READ_NOWAIT 1

static inline enum read_nowait variant_read_nowait(pthread_rwlock_t *rw, uintptr_t *data)
{
	*data = 0;
	return ba_read_trylock(handle_ba(rw)) ? READ_NOWAIT_HELD : READ_NOWAIT_MISS;
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	(void)data;
	return ba_write_lock_named(handle_ba(rw), dl, &rw->__data.__cur_writer, held_self());
}

/*
 * The id is read before the try-lock, so that the lock is named in the
 * very next store: a signal handler of this thread that comes between the
 * two finds the lock held by a writer it cannot see is its own, and waits
 * for ever, as glibc's would between its lock and its __cur_writer store.
 */
static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	pid_t self = held_self();

	(void)data;
	if (!ba_write_trylock(handle_ba(rw)))
		return EBUSY;
	handle_set_writer(rw, self);
	return 0;
}

/* The write fast path (variant.h): BA's try-lock. */
#define VARIANT_WRITE_FAST 1
/* Write holds are named in the handle (handle.h), as glibc names its writer. */
#define VARIANT_WRITE_OWNER 1

static inline enum write_fast variant_write_fast(pthread_rwlock_t *rw)
{
	uintptr_t none;

	return variant_write_trylock(rw, &none) == 0 ? WRITE_FAST_HELD : WRITE_FAST_MISS;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	handle_set_writer(rw, 0);
	ba_write_unlock(handle_ba(rw));
}

#endif
