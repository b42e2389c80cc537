/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap_handle.h - the handle of a variant whose lock lives in a heap block
 * (Cohort-RW, Per-CPU): bytes 32..47 of glibc's pthread_rwlock_t, which
 * glibc leaves unused in a private lock (__rwelision, __pad1, __pad2), hold
 * a struct heap_slot: the block pointer and its seal (registry.h), installed
 * on first use through the address-keyed registry.  A pointer whose seal
 * does not match the lock's own address (a copied lock, garbage bytes,
 * all-zero bytes) is no block: the lock is then a fresh unlocked lock of
 * this address, and its first use attaches this address's block.  Or they
 * hold the registry's in-place mark: the lock is then BA in bytes 0..15
 * (handle_ba), for its life (shared memory, or no memory for a block).
 *
 * Never written here: __shared (28, glibc's own mark of a process-shared
 * lock), __flags (48) except by init, __pad3 (16, rwlock.c's destroyed
 * marker), __pad4 (20, the life, handle.h).  __cur_writer (24) names the
 * writer, as for BA.
 */
#ifndef LIBBRAVO_HEAP_HANDLE_H
#define LIBBRAVO_HEAP_HANDLE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../interpose/handle.h"
#include "registry.h"

_Static_assert(offsetof(pthread_rwlock_t, __data.__rwelision) == 32 &&
	       offsetof(pthread_rwlock_t, __data.__pad2) == 40 &&
	       sizeof(struct heap_slot) == 16 &&
	       offsetof(struct heap_slot, block) == 8,
	       "seal in __rwelision+__pad1, block pointer in __pad2");

static inline struct heap_slot *handle_block_slot(pthread_rwlock_t *rw)
{
	return (struct heap_slot *)(void *)&rw->__data.__rwelision;
}

/* The lock's sealed block, or NULL: no block yet (or a copy, or garbage). */
static inline void *handle_sealed_block(pthread_rwlock_t *rw)
{
	return registry_block(rw, handle_block_slot(rw));
}

/*
 * The block of a lock the caller holds (attached when it was locked); NULL
 * only if the handle was overwritten meanwhile (re-initialized, copied
 * over): then there is nothing to release.
 */
static inline void *handle_held_block(pthread_rwlock_t *rw)
{
	return handle_sealed_block(rw);
}

#endif
