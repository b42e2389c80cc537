/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry.h - heap blocks of the variants whose lock does not fit in the
 * 56-byte pthread_rwlock_t (Cohort-RW, Per-CPU), keyed by lock address.
 *
 * The handle keeps a pointer to its block, installed on first use, beside
 * a seal: pointer ^ lock address ^ a per-process random secret.  A pointer
 * counts only if its seal matches the address it is read at, so a lock
 * copied elsewhere (memcpy, realloc), garbage bytes, or a stale image are
 * not this address's lock: they are a fresh unlocked lock and get a block
 * of their own.  No unsealed pointer is ever dereferenced.
 *
 * The registry remembers which block belongs to which lock address, because
 * programs free locks without pthread_rwlock_destroy (libstdc++'s
 * std::shared_mutex never calls it): when a new lock starts at an address
 * that had one (zero-filled again, re-initialized, or garbage), it gets the
 * old block back, reset, instead of a new one, provided the block is idle
 * and of the size the lock needs now; otherwise it gets a new block (an
 * idle old one is freed, a busy one left alone).  Memory is thus bounded by
 * the number of distinct lock addresses, which the allocator keeps near
 * the peak number of live locks.  Only strict mode's destroy of an idle
 * lock detaches its block, which is freed once newer detached blocks add
 * up to 256 KiB (a thread still leaving a call on the lock never touches
 * freed memory); glibc's destroy, and default mode's, change nothing.
 *
 * A lock that cannot have a block -- its memory is shared with other
 * processes (page_kind.h: each process would have a block of its own), or
 * there is no memory for one -- is marked *in place* instead, for its
 * life: its handle holds REGISTRY_INPLACE_SEAL and REGISTRY_INPLACE_BLOCK,
 * the same in every process (no secret in it), and the variant runs BA in
 * the lock's own bytes (heap_handle.h).  Nothing in a lock call ever fails
 * for lack of memory.
 *
 * Only first use, init and destroy come here; the lock paths read the
 * sealed pointer from the handle.  Blocks and the registry's own tables
 * come from the pool (pool.h), never from malloc: a first use may happen
 * in a signal handler that interrupted malloc.  Sharded, one mutex per
 * shard taken with every signal blocked (table_lock.h), held across fork
 * by an atfork handler.  Every install and removal for an address happens
 * under its shard's mutex.
 */
#ifndef LIBBRAVO_REGISTRY_H
#define LIBBRAVO_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../locks/hidden.h"

/* The two words of the handle the registry owns (16 bytes, in that order). */
struct heap_slot {
	_Atomic uintptr_t seal;  /* block ^ lock address ^ registry_secret */
	void *_Atomic block;     /* NULL: none */
};

/* What a lock needs of its block now. */
struct block_kind {
	size_t size;                               /* bytes */
	uintptr_t param;                           /* passed to reset */
	void (*reset)(void *block, uintptr_t param); /* make it a fresh unlocked lock */
	bool (*idle)(void *block);                 /* nobody holds or waits; NULL: always */
};

/* Per-process, never 0 once a block was sealed; 0 before. */
extern _Atomic uintptr_t registry_secret LIBBRAVO_HIDDEN;

/* The marks of a lock that runs in place (see above). */
#define REGISTRY_INPLACE_SEAL UINT64_C(0x6272766f696e706c) /* "brvoinpl" */
#define REGISTRY_INPLACE_BLOCK ((void *)1)

/* Does *hs mark its lock in place? */
static inline bool registry_inplace(struct heap_slot *hs)
{
	return atomic_load_explicit(&hs->block, memory_order_acquire) == REGISTRY_INPLACE_BLOCK &&
	       atomic_load_explicit(&hs->seal, memory_order_relaxed) == REGISTRY_INPLACE_SEAL;
}

static inline uintptr_t registry_seal(const void *addr, const void *block, uintptr_t secret)
{
	return (uintptr_t)block ^ (uintptr_t)addr ^ secret;
}

/* The block sealed to addr in *hs, or NULL (none, a copy, or garbage). */
static inline void *registry_block(const void *addr, struct heap_slot *hs)
{
	/* Acquire: pairs with the release that installed the (reset) block. */
	void *b = atomic_load_explicit(&hs->block, memory_order_acquire);
	uintptr_t secret = atomic_load_explicit(&registry_secret, memory_order_relaxed);

	if (!b || !secret ||
	    atomic_load_explicit(&hs->seal, memory_order_relaxed) != registry_seal(addr, b, secret))
		return NULL;
	return b;
}

/*
 * The block for the lock at addr, sealed into *hs: the one already sealed
 * there, else the block remembered for addr (reset, if idle and of the
 * size), else a new one (128-byte aligned, reset).  NULL if the lock runs
 * in place (marked so now, if it was not: shared memory, or no memory).
 */
void *registry_attach(const void *addr, struct heap_slot *hs, const struct block_kind *kind);

/*
 * destroy: forget addr's block and retire it (freed later, when idle).  If *hs holds a sealed block,
 * *hs is cleared; if not, *hs is not written at all (the lock may be in
 * read-only memory) and a block still remembered for addr is freed only
 * if idle.  The caller has checked that a sealed block is idle.
 */
void registry_detach(const void *addr, struct heap_slot *hs);

/* Register the fork handlers; idempotent (a first use may come before load). */
void registry_atfork(void);

#endif
