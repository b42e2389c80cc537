/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * variant_ba.h - the BA variant: the phase-fair lock inline in the handle.
 * Phase-fair whatever kind the program asks for.
 */
#ifndef LIBBRAVO_VARIANT_BA_H
#define LIBBRAVO_VARIANT_BA_H
#include <errno.h>
#include <string.h>

#include "../locks/ba.h"
#include "handle.h"
#include "held.h"

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
static inline uintptr_t variant_hold_class(uintptr_t data)
{
	(void)data;
	return 0;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
}

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	*data = 0;
	if (handle_writer(rw) != 0 || !ba_read_held(handle_ba(rw)))
		return false;
	ba_read_unlock(handle_ba(rw));
	return true;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	(void)data;
	return ba_read_lock(handle_ba(rw), dl);
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)data;
	return ba_read_trylock(handle_ba(rw)) ? 0 : EBUSY;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	ba_read_unlock(handle_ba(rw));
}

/* Every read hold is data 0: released inline (variant.h). */
#define VARIANT_READ_UNLOCK_UNDER 1

static inline __attribute__((always_inline)) int variant_read_unlock_under(pthread_rwlock_t *rw)
{
	return ba_read_unlock(handle_ba(rw));
}

/* The slow path's read that does not wait (variant.h): BA's read try-lock. */
#define VARIANT_READ_NOWAIT 1

static inline enum read_nowait variant_read_nowait(pthread_rwlock_t *rw)
{
	return ba_read_trylock(handle_ba(rw)) ? READ_NOWAIT_HELD : READ_NOWAIT_MISS;
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	int r = ba_write_lock(handle_ba(rw), dl);

	(void)data;
	if (r == 0)
		handle_set_writer(rw, held_self());
	return r;
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)data;
	if (!ba_write_trylock(handle_ba(rw)))
		return EBUSY;
	handle_set_writer(rw, held_self());
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
