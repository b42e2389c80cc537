/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * handle.h - what libbravo keeps in the program's 56-byte pthread_rwlock_t.
 *
 * glibc's layout is ABI (the public static initializers fix it), so the
 * handle reuses it:
 *
 *   __shared  (offset 28)  non-zero only for PTHREAD_PROCESS_SHARED locks,
 *                          written only by glibc's init: such locks stay
 *                          glibc's, operated in place, and are recognized
 *                          from the bytes alone, also in a process that only
 *                          maps the memory.  libbravo never writes it.
 *   __flags   (offset 48)  the kind; 2 = PREFER_WRITER_NONRECURSIVE_NP.
 *   __pad3    (offset 16)  HANDLE_DESTROYED after destroy in strict mode
 *                          (BRAVO_CHECK=1), 0 after init.
 *   __pad4    (offset 20)  the lock's life: 0 in a fresh lock (zeroed or
 *                          initialized), given a number from a process-wide
 *                          counter when one of its read holds is first
 *                          released on another thread's behalf, so that the
 *                          records of such releases (handoff.h) die with the
 *                          life they were made in.  Every variant; glibc
 *                          2.36 never writes it.
 *   __rwelision, __pad1 (offsets 32..39)  the BRAVO token (the lock's name
 *                          in the visible readers table) for the BRAVO
 *                          variants; glibc 2.36 never writes them.
 *   __pad2    (offset 40)  the BRAVO word (RBias, DRAINING, waiting
 *                          writers, InhibitUntil) for the BRAVO variants.
 *   offsets 0..15          the BA lock, for BA and BRAVO-BA.
 *   __cur_writer (offset 24)  the writer's thread id (gettid()) while a
 *                          writer is inside, else 0: glibc's own for
 *                          BRAVO-pthread, libbravo's (handle_set_writer)
 *                          for the others.  Write holds are known from it
 *                          alone (held.h).
 *                          With the profile on, libbravo's id carries
 *                          HANDLE_WRITER_PROFILED (below).
 *   the whole struct       glibc's own lock, for BRAVO-pthread (glibc
 *                          leaves __pad2 and __pad3 alone).
 *
 * All-zero bytes (PTHREAD_RWLOCK_INITIALIZER) are an unlocked private lock
 * in every variant.
 */
#ifndef LIBBRAVO_HANDLE_H
#define LIBBRAVO_HANDLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "../../locks/ba.h"
#include "../../locks/bravo.h"

#define HANDLE_DESTROYED 0xdeadb7a0u

_Static_assert(sizeof(pthread_rwlock_t) == 56, "glibc 64-bit pthread_rwlock_t layout");
_Static_assert(offsetof(pthread_rwlock_t, __data.__rwelision) == 32 &&
	       offsetof(pthread_rwlock_t, __data.__pad2) == 40,
	       "BRAVO token and word: glibc's unused bytes 32..47");
_Static_assert(sizeof(struct ba_lock) <= offsetof(pthread_rwlock_t, __data.__pad3),
	       "BA fits before the handle's marker");

/*
 * A fresh, unlocked, private lock of attr's kind (NULL: the default): all
 * bytes 0, as PTHREAD_RWLOCK_INITIALIZER, but the kind, which the program
 * may read back.  Every variant's init but BRAVO-pthread's (glibc's own).
 */
static inline void handle_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr)
		pthread_rwlockattr_getkind_np(attr, &kind);
	memset(rw, 0, sizeof(*rw));
	rw->__data.__flags = (unsigned)kind;
}

static inline bool handle_is_pshared(pthread_rwlock_t *rw)
{
	return __atomic_load_n(&rw->__data.__shared, __ATOMIC_RELAXED) != 0;
}

static inline bool handle_is_destroyed(pthread_rwlock_t *rw)
{
	return __atomic_load_n(&rw->__data.__pad3, __ATOMIC_RELAXED) == HANDLE_DESTROYED;
}

static inline void handle_mark_destroyed(pthread_rwlock_t *rw)
{
	__atomic_store_n(&rw->__data.__pad3, HANDLE_DESTROYED, __ATOMIC_RELAXED);
}

static inline bool handle_prefers_writers(pthread_rwlock_t *rw)
{
	return rw->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/*
 * The thread id of the writer inside, 0 if none.  Relaxed: a thread asks
 * about its own writes (program order), or, unlocking a lock it holds
 * nothing of, wants a snapshot (BA's counters cannot tell readers waiting
 * behind a writer from readers inside).  BA's writers set it after they
 * enter and clear it before they leave; glibc does the same.
 */
static inline pid_t handle_writer(pthread_rwlock_t *rw)
{
	return __atomic_load_n(&rw->__data.__cur_writer, __ATOMIC_RELAXED);
}

/*
 * Added to the writer's id by a write acquisition made with the profile
 * on (profile.h), where libbravo names the writer (BA, BRAVO-BA): the
 * inline unlock, which compares the id with the caller's, then misses and
 * takes the full path, which ends the hold's timing.  Thread ids stay
 * below 2^22 (the kernel's PID_MAX_LIMIT).  handle_writer_id strips it.
 */
#define HANDLE_WRITER_PROFILED 0x40000000

static inline pid_t handle_writer_id(pid_t writer)
{
	return writer & ~HANDLE_WRITER_PROFILED;
}

static inline void handle_set_writer(pthread_rwlock_t *rw, pid_t id)
{
	__atomic_store_n(&rw->__data.__cur_writer, id, __ATOMIC_RELAXED);
}

/* The lock's life (see the top), 0 while it has none. */
static inline uint32_t handle_life(pthread_rwlock_t *rw)
{
	return __atomic_load_n((uint32_t *)(void *)&rw->__data.__pad4, __ATOMIC_RELAXED);
}

/* The lock's life, given one now if it has none (racing callers agree). */
static inline uint32_t handle_life_ensure(pthread_rwlock_t *rw)
{
	static _Atomic uint32_t lives;
	uint32_t *word = (uint32_t *)(void *)&rw->__data.__pad4;
	uint32_t life = __atomic_load_n(word, __ATOMIC_RELAXED), mine;

	if (life)
		return life;
	do
		mine = atomic_fetch_add_explicit(&lives, 1, memory_order_relaxed) + 1;
	while (mine == 0);
	if (__atomic_compare_exchange_n(word, &life, mine, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		return mine;
	return life;
}

static inline struct bravo *handle_bravo(pthread_rwlock_t *rw)
{
	return (struct bravo *)(void *)&rw->__data.__rwelision;
}

/* The BA lock at offset 0, for BA and BRAVO-BA. */
static inline struct ba_lock *handle_ba(pthread_rwlock_t *rw)
{
	return (struct ba_lock *)(void *)rw;
}

#endif
