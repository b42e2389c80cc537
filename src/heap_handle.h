/*
 * heap_handle.h - the handle of a variant whose lock lives in a heap block
 * (Cohort-RW, Per-CPU): glibc's __pad2 holds the block pointer, installed
 * on first use through the address-keyed registry (registry.h).  All-zero
 * bytes are still an unlocked lock: the pointer is then NULL.
 */
#ifndef LIBBRAVO_HEAP_HANDLE_H
#define LIBBRAVO_HEAP_HANDLE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "registry.h"

_Static_assert(sizeof(void *) <= sizeof(((pthread_rwlock_t *)0)->__data.__pad2),
	       "block pointer fits in __pad2");

static inline void *_Atomic *handle_block_slot(pthread_rwlock_t *rw)
{
	return (void *_Atomic *)(void *)&rw->__data.__pad2;
}

/* The lock's block, attached on first use; NULL only without memory. */
static inline void *handle_block(pthread_rwlock_t *rw, size_t size, block_reset_fn reset)
{
	/* Acquire: pairs with the release that installed the reset block. */
	void *b = atomic_load_explicit(handle_block_slot(rw), memory_order_acquire);

	return b ? b : registry_attach(rw, handle_block_slot(rw), size, reset);
}

/* The block of a lock the caller holds (attached when it was locked). */
static inline void *handle_held_block(pthread_rwlock_t *rw)
{
	return atomic_load_explicit(handle_block_slot(rw), memory_order_relaxed);
}

/* init: a private lock of the given kind, its block (if any) reused lazily. */
static inline void handle_heap_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr)
		pthread_rwlockattr_getkind_np(attr, &kind);
	memset(rw, 0, sizeof(*rw));
	rw->__data.__flags = (unsigned)kind;
}

#endif
