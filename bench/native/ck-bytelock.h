/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ck-bytelock.h - Concurrency Kit's byte lock (ck_bytelock.h) behind
 * out-of-line C functions, for native-rw.cc: the CK header converts void *
 * implicitly, which C++ rejects.  The storage is opaque here and checked
 * against ck_bytelock_t's size and alignment in ck-bytelock.c.
 */
#ifndef BENCH_NATIVE_CK_BYTELOCK_H
#define BENCH_NATIVE_CK_BYTELOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct native_bytelock {
	uint64_t words[8]; /* a ck_bytelock_t: 64 bytes, 8-aligned */
} native_bytelock;

/* slot: 1..56 own a reader byte, larger ones share a counter; a writer's
 * slot must be unique and non-zero. */
void native_bytelock_init(native_bytelock *l);
void native_bytelock_read_lock(native_bytelock *l, unsigned slot);
void native_bytelock_read_unlock(native_bytelock *l, unsigned slot);
void native_bytelock_write_lock(native_bytelock *l, unsigned slot);
void native_bytelock_write_unlock(native_bytelock *l);

#ifdef __cplusplus
}
#endif

#endif
