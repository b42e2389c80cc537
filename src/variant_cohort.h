/*
 * variant_cohort.c - the Cohort-RW variant: C-RW-WP (locks/cohort.h) in a
 * heap block, one reader indicator and one local writer lock per NUMA node.
 * The per-acquisition word is the caller's node, computed once when it
 * locks: a reader that migrated still releases the indicator it raised, a
 * writer the local lock it took.  Writer-preferring whatever the kind.
 */
#ifndef LIBBRAVO_VARIANT_COHORT_H
#define LIBBRAVO_VARIANT_COHORT_H
#include <errno.h>
#include <stdio.h>

#include "../locks/cohort.h"
#include "config.h"
#include "heap_handle.h"
#include "topology.h"

static const char variant_name[] = "cohort-rw";

static unsigned cohort_nodes(void)
{
	return topology.nnodes < COHORT_MAX_NODES ? topology.nnodes : COHORT_MAX_NODES;
}

static void cohort_reset(void *block)
{
	cohort_rw_init(block, cohort_nodes(), config.cohort_handoff);
}

static struct cohort_rw *cohort_of(pthread_rwlock_t *rw)
{
	return handle_block(rw, cohort_rw_size(cohort_nodes()), cohort_reset);
}

/* The caller's node, folded into the lock's own node count. */
static unsigned node_for(struct cohort_rw *l)
{
	unsigned node = topology_node();

	return node < l->global.nnodes ? node : node % l->global.nnodes;
}

static inline void variant_load(void)
{
	topology_load();
	registry_atfork();
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
	handle_heap_init(rw, attr);
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	struct cohort_rw *l = handle_held_block(rw);

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

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	(void)data;
	return false; /* TODO(i12-heap): release a read hold on another reader's behalf */
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	struct cohort_rw *l = handle_held_block(rw);

	if (l && !cohort_rw_is_idle(l))
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
	cohort_rw_read_unlock(handle_held_block(rw), (unsigned)data);
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
	cohort_rw_write_unlock(handle_held_block(rw), (unsigned)data);
}

#endif
