/*
 * registry.h - heap blocks of the variants whose lock does not fit in the
 * 56-byte pthread_rwlock_t (Cohort-RW, Per-CPU), keyed by lock address.
 *
 * The handle keeps a pointer to its block, installed on first use.  The
 * registry remembers which block belongs to which lock address, because
 * programs free locks without pthread_rwlock_destroy (libstdc++'s
 * std::shared_mutex never calls it): when a new lock starts at an address
 * that had one (zero-filled again, or re-initialized), it gets the old
 * block back, reset, instead of a new one.  Memory is thus bounded by the
 * number of distinct lock addresses, which the allocator keeps near the
 * peak number of live locks.  destroy frees the block.
 *
 * Only first use, init and destroy come here; the lock paths read the
 * pointer from the handle.  Sharded, one glibc mutex per shard (never a
 * pthread_rwlock: those are ours), held across fork by an atfork handler.
 */
#ifndef LIBBRAVO_REGISTRY_H
#define LIBBRAVO_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>

/* Make a block a fresh unlocked lock. */
typedef void (*block_reset_fn)(void *block);

/*
 * The block for the lock at addr, installed in *slot: *slot if set, else
 * the block remembered for addr (reset), else a new one (128-byte aligned,
 * reset).  NULL if no memory.
 */
void *registry_attach(const void *addr, void *_Atomic *slot, size_t size, block_reset_fn reset);

/* Forget addr's block and free it; clears *slot. */
void registry_detach(const void *addr, void *_Atomic *slot);

/* Register the fork handlers (once, at load). */
void registry_atfork(void);

#endif
