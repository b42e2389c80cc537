/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * variant_cohort.h - the Cohort-RW variant: C-RW-WP (locks/cohort.h) in a
 * heap block, one reader indicator and one local writer lock per NUMA node.
 * The per-acquisition word is the caller's node, computed once when it
 * locks: a reader that migrated still releases the indicator it raised, a
 * writer the local lock it took.  Writer-preferring whatever the kind.
 *
 * Every call may be the first of the process, before libbravo's
 * constructor: the block is built only after the settings and the
 * topology are read (node count, hand-off bound), and the registry never
 * reuses a block of another size.
 */
#ifndef LIBBRAVO_VARIANT_COHORT_H
#define LIBBRAVO_VARIANT_COHORT_H
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "../locks/cohort.h"
#include "config.h"
#include "heap_handle.h"
#include "topology.h"

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

/* Once, by rwlock.c's load (also when a first call comes before the constructor). */
static inline void variant_load(void)
{
	topology_load();
	registry_atfork();
}

static __attribute__((noinline)) struct cohort_rw *cohort_attach(pthread_rwlock_t *rw)
{
	struct block_kind kind;
	unsigned nodes;

	nodes = cohort_nodes();
	kind = (struct block_kind){ cohort_rw_size(nodes),
				    nodes | (uintptr_t)config.cohort_handoff << 32,
				    cohort_reset, cohort_block_idle };
	return registry_attach(rw, handle_block_slot(rw), &kind);
}

/* The lock's block, attached on first use; NULL: no memory. */
static inline struct cohort_rw *cohort_of(pthread_rwlock_t *rw)
{
	struct cohort_rw *l = handle_sealed_block(rw);

	return __builtin_expect(l != NULL, 1) ? l : cohort_attach(rw);
}

/* The caller's node, folded into the lock's own node count. */
static unsigned node_for(struct cohort_rw *l)
{
	unsigned node = topology_node();

	return node < l->global.nnodes ? node : node % l->global.nnodes;
}

static inline const char *variant_detail(void)
{
	static char detail[96];

	snprintf(detail, sizeof(detail), "nodes=%u node_source=%s handoff=%u lock_bytes=%zu",
		 cohort_nodes(), topology.node_source, config.cohort_handoff,
		 cohort_rw_size(cohort_nodes()));
	return detail;
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_init(rw, attr);
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	struct cohort_rw *l = handle_sealed_block(rw);

	return !l || cohort_rw_is_idle(l);
}

/* The class of a hold: the sub-lock or node it raised. */
static inline uintptr_t variant_hold_class(uintptr_t data)
{
	return data;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
}

/*
 * EBUSY, changing nothing, if the lock is held or waited for.  A lock
 * without a (sealed) block is an unused lock: its bytes are not written.
 */
static inline int variant_destroy(pthread_rwlock_t *rw)
{
	if (!variant_is_idle(rw))
		return EBUSY;
	registry_detach(rw, handle_block_slot(rw));
	return 0;
}

/* The lock's block, and the caller's node recorded in *data; NULL: no memory. */
static inline struct cohort_rw *cohort_here(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct cohort_rw *l = cohort_of(rw);

	if (l)
		*data = node_for(l);
	return l;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct cohort_rw *l = cohort_here(rw, data);

	return l ? cohort_rw_read_lock(l, (unsigned)*data, dl) : EAGAIN;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct cohort_rw *l = cohort_here(rw, data);

	if (!l)
		return EAGAIN;
	return cohort_rw_read_trylock(l, (unsigned)*data) ? 0 : EBUSY;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	struct cohort_rw *l = handle_held_block(rw);

	if (l)
		cohort_rw_read_unlock(l, (unsigned)data);
}

/*
 * The caller holds nothing on the lock: if some thread holds it for
 * reading, release one read hold (on a node with a reader present, the
 * node in *data) and return true; otherwise change nothing, false.
 */
static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct cohort_rw *l = handle_sealed_block(rw);

	if (!l)
		return false;
	for (unsigned n = 0; n < l->global.nnodes; n++) {
		if (cohort_rw_readers_present(l, n)) {
			cohort_rw_read_unlock(l, n);
			*data = n;
			return true;
		}
	}
	return false;
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct cohort_rw *l = cohort_here(rw, data);

	return l ? cohort_rw_write_lock(l, (unsigned)*data, dl) : EAGAIN;
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct cohort_rw *l = cohort_here(rw, data);

	if (!l)
		return EAGAIN;
	return cohort_rw_write_trylock(l, (unsigned)*data) ? 0 : EBUSY;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	struct cohort_rw *l = handle_held_block(rw);

	if (l)
		cohort_rw_write_unlock(l, (unsigned)data);
}

#endif
