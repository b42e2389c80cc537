/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * addr_hash.h - a lock's address spread over all the bits of a word
 * (murmur3's finalizer, first half), for the tables keyed by address:
 * registry.c's shards, profile.c's index.
 */
#ifndef LIBBRAVO_ADDR_HASH_H
#define LIBBRAVO_ADDR_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline size_t addr_hash(const void *addr)
{
	uint64_t z = (uint64_t)(uintptr_t)addr;

	z = (z ^ (z >> 33)) * UINT64_C(0xff51afd7ed558ccd);
	z ^= z >> 33;
	return (size_t)z;
}

#endif
