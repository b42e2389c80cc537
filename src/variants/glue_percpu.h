/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_percpu.h - the Per-CPU variant: one BA sub-lock per online CPU
 * (locks/percpu.h) in a heap block (glue_heap.h has the glue).  A
 * reader's per-acquisition word is the sub-lock index it took, so it
 * releases that one after a migration.
 */
#ifndef LIBBRAVO_GLUE_PERCPU_H
#define LIBBRAVO_GLUE_PERCPU_H
#include <stdio.h>

#include "../../locks/percpu.h"
#include "heap_handle.h"
#include "topology.h"

typedef struct percpu_lock heap_lock_t;

/* A handler's read while its thread cannot proceed: let in by the glue. */
static inline bool heap_guest_ok(struct percpu_lock *l)
{
	return percpu_guest_ok(l);
}

static void percpu_reset(void *block, uintptr_t nsub)
{
	percpu_init(block, (unsigned)nsub);
}

static bool percpu_block_idle(void *block)
{
	return percpu_is_idle(block);
}

static inline struct block_kind heap_kind(void)
{
	return (struct block_kind){ percpu_size(topology.ncpus), topology.ncpus,
				    percpu_reset, percpu_block_idle };
}

static inline unsigned heap_index(struct percpu_lock *l)
{
	return percpu_index(l, topology_cpu());
}

static inline unsigned heap_indices(struct percpu_lock *l)
{
	return l->nsub;
}

static inline int heap_read_lock(struct percpu_lock *l, unsigned idx, const struct deadline *dl)
{
	return percpu_read_lock(l, idx, dl);
}

static inline bool heap_read_trylock(struct percpu_lock *l, unsigned idx)
{
	return percpu_read_trylock(l, idx);
}

static inline void heap_read_unlock(struct percpu_lock *l, unsigned idx)
{
	percpu_read_unlock(l, idx);
}

static inline uint32_t heap_readers_in(struct percpu_lock *l, unsigned idx)
{
	return percpu_readers_in(l, idx);
}

static inline int heap_write_lock(struct percpu_lock *l, const struct deadline *dl, int *name, int id)
{
	return percpu_write_lock_named(l, dl, name, id);
}

static inline bool heap_write_trylock(struct percpu_lock *l)
{
	return percpu_write_trylock(l);
}

static inline void heap_write_unlock(struct percpu_lock *l)
{
	percpu_write_unlock(l);
}

static inline bool heap_is_idle(struct percpu_lock *l)
{
	return percpu_is_idle(l);
}

#include "glue_heap.h"

static inline const char *variant_detail(void)
{
	static char detail[64];

	snprintf(detail, sizeof(detail), "sublocks=%u lock_bytes=%zu",
		 topology.ncpus, percpu_size(topology.ncpus));
	return detail;
}

#endif
