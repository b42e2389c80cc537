/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_glibc.h - glibc's own rwlock, in place, behind libbravo's
 * interposition and nothing else: no algorithm of libbravo's.
 *
 * Not a lock variant (configure.ac's list): it is built only as
 * libbravo/libbravo-glibc.so (LIBBRAVO_VARIANT_GLIBC), the profile's view
 * of glibc's lock, which bravo-run --lock glibc --profile and bravo-compare
 * --profile preload where a plain glibc run has no profile to give.  Every
 * lock is glibc's bytes, as under BRAVO-pthread without the BRAVO word:
 * glibc names its writer (VARIANT_WRITE_OWNER), its unlock is glibc's
 * (VARIANT_WRITE_UNLOCK_GLIBC); the fast paths are glibc's try-locks.
 * Its read holds are glibc's to answer for (VARIANT_UNDER_UNLISTED):
 * outside strict mode none is listed, so a write by a reader waits, a
 * re-entry is a new hold and another thread's unlock releases one, as
 * without the library.  A reader count overflow (EAGAIN) is glibc's
 * answer, passed on.
 */
#ifndef LIBBRAVO_GLUE_GLIBC_H
#define LIBBRAVO_GLUE_GLIBC_H
#include <errno.h>

#include "../interpose/handle.h"
#include "../interpose/real.h"

static inline void variant_load(void)
{
}

static inline const char *variant_detail(void)
{
	return "lock=glibc";
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return real()->init(rw, attr);
}

/*
 * glibc's lock is idle when no reader is counted, no writer holds it and
 * none waits (nptl/pthread_rwlock_common.c: __readers bit 1 WRLOCKED, the
 * count from bit 3; __writers less its WRHANDOVER bit 31).
 */
static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	unsigned r = __atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED);
	unsigned w = __atomic_load_n(&rw->__data.__writers, __ATOMIC_RELAXED);

	return (r >> 3) == 0 && !(r & 2) && (w & 0x7fffffffu) == 0;
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	return variant_is_idle(rw) ? 0 : EBUSY;
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

/* A read phase with readers inside (__readers: not WRPHASE, a count). */
static inline bool variant_read_held_class(pthread_rwlock_t *rw, uintptr_t cls)
{
	unsigned r = __atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED);

	return cls == 0 && !(r & 1) && (r >> 3) != 0;
}

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *cls)
{
	*cls = 0;
	if (!variant_read_held_class(rw, 0))
		return false;
	real_loaded()->unlock(rw);
	return true;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	(void)data;
	return dl && dl->abstime ? real_loaded()->clockrdlock(rw, dl->clock, dl->abstime)
				 : real_loaded()->rdlock(rw);
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)data;
	return real_loaded()->tryrdlock(rw);
}

/* Every read hold is of the plain class already (held.h). */
static inline int variant_read_lock_plain(pthread_rwlock_t *rw, const struct deadline *dl)
{
	uintptr_t data;

	return variant_read_lock(rw, &data, dl);
}

static inline int variant_read_trylock_plain(pthread_rwlock_t *rw)
{
	return real_loaded()->tryrdlock(rw);
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	real_loaded()->unlock(rw);
}

/* Every read hold is glibc's, data 0: none is listed (variant.h). */
#define VARIANT_UNDER_UNLISTED 1

/* Every read hold is data 0: glibc's unlock, a tail call (variant.h). */
#define VARIANT_READ_UNLOCK_UNDER 1

static inline __attribute__((always_inline)) int variant_read_unlock_under(pthread_rwlock_t *rw)
{
	return real_loaded()->unlock(rw);
}

/* The slow path's read that does not wait (variant.h): glibc's try-lock. */
#define VARIANT_READ_NOWAIT 1

static inline enum read_nowait variant_read_nowait(pthread_rwlock_t *rw, uintptr_t *data)
{
	*data = 0;
	return real_loaded()->tryrdlock(rw) == 0 ? READ_NOWAIT_HELD : READ_NOWAIT_MISS;
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	(void)data;
	return dl && dl->abstime ? real_loaded()->clockwrlock(rw, dl->clock, dl->abstime)
				 : real_loaded()->wrlock(rw);
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)data;
	return real_loaded()->trywrlock(rw);
}

/* The write fast path (variant.h): glibc's try-lock, right for process-shared locks too. */
#define VARIANT_WRITE_FAST 1
#define VARIANT_WRITE_FAST_PSHARED 1
/* glibc names its writer (handle.h), and its unlock is all a write unlock is. */
#define VARIANT_WRITE_OWNER 1
#define VARIANT_WRITE_UNLOCK_GLIBC 1

static inline enum write_fast variant_write_fast(pthread_rwlock_t *rw)
{
	return real_loaded()->trywrlock(rw) == 0 ? WRITE_FAST_HELD : WRITE_FAST_MISS;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	real_loaded()->unlock(rw);
}

#endif
