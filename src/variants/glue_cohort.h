/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_cohort.h - the Cohort-RW variant: C-RW-WP (locks/cohort.h) in a
 * heap block, one reader indicator and one local writer lock per NUMA node
 * (glue_heap.h has the glue).  A reader's per-acquisition word is its
 * node, computed once when it locks: a reader that migrated still releases
 * the indicator it raised.  A writer keeps its node in the block
 * (writer_node), which only the writer inside touches.  Writer-preferring
 * whatever the kind.
 */
#ifndef LIBBRAVO_GLUE_COHORT_H
#define LIBBRAVO_GLUE_COHORT_H
#include <stdio.h>

#include "../../locks/cohort.h"
#include "../interpose/config.h"
#include "heap_handle.h"
#include "topology.h"

typedef struct cohort_rw heap_lock_t;

/* The algorithm lets a handler's read in itself (cohort.h, Guests). */
static inline bool heap_guest_ok(struct cohort_rw *l)
{
	(void)l;
	return false;
}

static unsigned cohort_nodes(void)
{
	return topology.nnodes < COHORT_MAX_NODES ? topology.nnodes : COHORT_MAX_NODES;
}

/* param: nodes in the low half, the hand-off bound in the high half. */
static void cohort_reset(void *block, uintptr_t param)
{
	cohort_rw_init(block, (unsigned)(param & 0xffffffffu), (unsigned)(param >> 32));
}

static bool cohort_block_idle(void *block)
{
	return cohort_rw_is_idle(block);
}

static inline struct block_kind heap_kind(void)
{
	unsigned nodes = cohort_nodes();

	return (struct block_kind){ cohort_rw_size(nodes),
				    nodes | (uintptr_t)config.cohort_handoff << 32,
				    cohort_reset, cohort_block_idle };
}

/* The caller's node, folded into the lock's own node count. */
static inline unsigned heap_index(struct cohort_rw *l)
{
	unsigned node = topology_node();

	return node < l->global.nnodes ? node : node % l->global.nnodes;
}

static inline unsigned heap_indices(struct cohort_rw *l)
{
	return l->global.nnodes;
}

static inline int heap_read_lock(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	return cohort_rw_read_lock(l, node, dl);
}

/*
 * The read try-lock asks for the CPU and maps it to a node: out of line
 * in the read exports (glue_heap.h), whose other paths then need no frame.
 */
#define HEAP_READ_NOWAIT_OUT_OF_LINE 1

static inline bool heap_read_trylock(struct cohort_rw *l, unsigned node)
{
	return cohort_rw_read_trylock(l, node);
}

static inline void heap_read_unlock(struct cohort_rw *l, unsigned node)
{
	cohort_rw_read_unlock(l, node);
}

static inline uint32_t heap_readers_in(struct cohort_rw *l, unsigned node)
{
	return cohort_rw_readers_present(l, node);
}

/* Its guests need no name (cohort.h): wowner names the writer from its drain on. */
static inline int heap_write_lock(struct cohort_rw *l, const struct deadline *dl, int *name, int id)
{
	unsigned node = heap_index(l);
	int r = cohort_rw_write_lock(l, node, dl);

	if (r == 0) {
		cohort_rw_set_writer_node(l, node);
		__atomic_store_n(name, id, __ATOMIC_RELAXED);
	}
	return r;
}

static inline bool heap_write_trylock(struct cohort_rw *l)
{
	unsigned node = heap_index(l);

	if (!cohort_rw_write_trylock(l, node))
		return false;
	cohort_rw_set_writer_node(l, node);
	return true;
}

static inline void heap_write_unlock(struct cohort_rw *l)
{
	cohort_rw_write_unlock(l, cohort_rw_writer_node(l));
}

static inline bool heap_is_idle(struct cohort_rw *l)
{
	return cohort_rw_is_idle(l);
}

#include "glue_heap.h"

static inline const char *variant_detail(void)
{
	static char detail[96];

	snprintf(detail, sizeof(detail), "nodes=%u node_source=%s handoff=%u lock_bytes=%zu",
		 cohort_nodes(), topology.node_source, config.cohort_handoff,
		 cohort_rw_size(cohort_nodes()));
	return detail;
}

#endif
