/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pool.h - the one allocator of libbravo's own memory (heap blocks, the
 * registry's tables, the hand-off records, the statistics' blocks, the
 * profile's report).
 *
 * A lock call may run in a signal handler that interrupted malloc on the
 * same thread, in a thread being cancelled, or in a forked child, so the
 * library never calls malloc: memory comes from mmap, in size classes of
 * powers of two from 64 bytes to 4 KiB carved out of 64 KiB chunks, and
 * in whole pages above that.  A class's free objects are kept on a list
 * and reused; chunks are never returned to the system.  An object of a
 * class of at least 128 bytes is 128-byte aligned (chunks are page
 * aligned, objects sit at multiples of their class), page-sized ones are
 * page aligned.
 *
 * The free lists are guarded by one mutex taken with every signal blocked
 * and cancellation off (table_lock.h), and held across fork (pool_atfork).
 * pool_alloc returns NULL when mmap fails: every caller has a fallback
 * that needs no memory.  errno is left as it was.
 */
#ifndef LIBBRAVO_POOL_H
#define LIBBRAVO_POOL_H

#include <stddef.h>

#include "../../locks/hidden.h"

/* size bytes, zeroed; NULL if no memory. */
void *pool_alloc(size_t size) LIBBRAVO_HIDDEN;
/* Give back an object of pool_alloc(size) (size as allocated). */
void pool_free(void *p, size_t size) LIBBRAVO_HIDDEN;
/* The fork handlers of the pool's mutex (once, at load). */
void pool_atfork(void) LIBBRAVO_HIDDEN;

#endif
