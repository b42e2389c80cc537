/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cohort.h - C-RW-WP, the NUMA-aware writer-preference reader-writer lock.
 *
 * I. Calciu, D. Dice, Y. Lev, V. Luchangco, V. J. Marathe, N. Shavit,
 * "NUMA-aware reader-writer locks", PPoPP 2013 (C-RW-WP), with writers
 * serialized by a cohort mutex: D. Dice, V. J. Marathe, N. Shavit, "Lock
 * Cohorting: A General Technique for Designing NUMA Locks", PPoPP 2012.
 *
 * Readers announce themselves on their own NUMA node's reader indicator, so
 * read-mostly workloads never share a written cache line across nodes.
 * Writers take a cohort mutex (a global lock plus one local lock per node):
 * a releasing writer hands the global lock to a writer of its own node
 * along with the local lock, at most handoff_bound times in a row, so write
 * bursts stay on one node without starving the others.  It hands off only
 * to writers that spin, not to parked ones (see local_pass in cohort.c):
 * readers stay out during a hand-off, and a parked receiver can be a time
 * slice away from running.
 *
 * Reader:  wait while WACTIVE; ingress[node]++; re-check WACTIVE; if it is
 *          set, back out (egress[node]++) and wait again.  Unlock:
 *          egress[node]++.
 * Writer:  cohort mutex; set WACTIVE; name itself in wowner; wait until
 *          every node's ingress equals its egress.  A writer handed the
 *          cohort mutex by a writer of its own node finds WACTIVE set
 *          already; it still names itself and checks the indicators, for
 *          guests (below), which costs a load per node.
 *
 * Guests.  A signal handler that reads the lock on a thread whose writer is
 * waiting for the cohort mutex or for readers (wait_writer_pending) cannot
 * wait for WACTIVE to clear: the mutex may be handed to that very writer
 * while the handler runs, and it cannot run before the handler returns.
 * Such a reader enters as a guest whenever no other writer has named
 * itself in wowner: it arrives on its node's indicator regardless of
 * WACTIVE, then re-reads wowner (seq_cst, after its seq_cst arrival); a
 * writer names itself (seq_cst) before its drain's seq_cst loads of
 * ingress.  So either the writer's drain counts the guest and waits for
 * it, or the guest sees the writer named and backs out (a Dekker pair, as
 * for ordinary readers and WACTIVE).  A writer inside is always named, so
 * a guest never reads beside it; its own thread's writer may be named
 * (it cannot run while the handler does) and counts the guest when it
 * drains.  Guests wait by polling: they are rare.
 *
 * The caller passes its node (0..nnodes-1) to every call, unlocks included:
 * a thread that migrated since it locked still releases what it took.
 *
 * Layout: four kinds of 128-byte sector (two cache lines, against the
 * adjacent-line prefetcher), 256 + 256 * nnodes bytes in all: 512 for one
 * node, 768 for two (the paper's C-RW-WP: 896 for two).
 *
 *   central (readers read it on every acquisition, writers write it once
 *   per global tenure)
 *     wstate   bit 0  COHORT_WACTIVE: a writer holds the cohort mutex (or it
 *                     is being handed over); readers stay out
 *              bit 1  COHORT_RPARK: a reader sleeps on wstate
 *   global (writers only)
 *     gstate   bits 63..32  waiting nodes: bit n set while node n's local
 *                           lock holder waits for the global lock
 *              bit  31      COHORT_GPARK: a waiter sleeps on the low half
 *              bits 30..0   owner: 0 free, n + 1 owned by node n
 *     wowner   the writer that holds the cohort mutex, from the start of
 *              its drain to its unlock (wait_self_id()), 0 in between
 *              holders (a hand-off in transit) and while the mutex is free
 *     streak   local hand-offs in the current global tenure (owner only)
 *     nnodes, handoff_bound   read-only after init
 *     handoffs statistics: local hand-offs since init (owner only)
 *   per node, reader indicator (that node's readers, and the draining writer)
 *     ingress  bits 31..1  arrivals (COHORT_RI_INC steps), bit 0 unused
 *     egress   bits 31..1  departures, bit 0 COHORT_WPARK: the draining
 *                          writer sleeps on egress
 *   per node, local lock (that node's writers)
 *     lstate   bits 31..2  writers of the node waiting for the local lock
 *              bit  1      COHORT_LGPASS: free, and the global lock comes
 *                          with it (handed over by a writer of this node)
 *              bit  0      COHORT_LLOCKED
 *
 * Invariants:
 *  - WACTIVE is set only by the global owner and cleared only by the global
 *    owner just before it frees the global lock, so it is never set while
 *    the global lock is free.  A grant to another node keeps it set.
 *  - A node's readers are inside (or on their way out) iff its ingress and
 *    egress counts differ (modulo 2^31; fewer than 2^31 readers at once).
 *  - LGPASS implies the lock is unlocked, node n owns the global lock,
 *    WACTIVE is set, no reader but guests is inside, and at least one writer was
 *    registered as waiting when it was set.  Registered waiters withdraw
 *    only while the local lock is held, so someone takes it.
 *  - Waiting nodes are set only while the global lock is owned; a release
 *    with waiting nodes grants it directly to the next one after the
 *    releasing node in round-robin order.  So a writer waiting for the
 *    global lock gets it after at most nnodes - 1 tenures of at most
 *    handoff_bound + 1 acquisitions each.
 *
 * Memory ordering: a reader's arrival (seq_cst RMW on ingress) followed by
 * its seq_cst load of wstate, and a writer's setting of WACTIVE followed by
 * its seq_cst loads of ingress, form a Dekker pair: either the writer counts
 * the reader or the reader sees WACTIVE and backs out.  The writer reads a
 * node's egress (acquire) before its ingress, so equal counts mean every
 * reader it counted has left, and their critical sections happen before
 * its own.  A reader that sees WACTIVE clear synchronizes with the release
 * that cleared it (the last writer's critical section happens before its
 * own).  Writers pass the critical section on through the release/acquire
 * of lstate (local hand-off) and gstate (global).  Time-outs: see cohort.c.
 *
 * Every wait spins for wait_spin_budget pauses and then parks on a futex
 * (wait.h): readers on wstate, the draining writer on a node's egress,
 * local waiters on lstate, global waiters on gstate's low half.  Readers
 * behind a writer, the draining writer and local waiters spin only while
 * the threads they wait for and with are fewer than the CPUs, and readers
 * not once another reader sleeps (wait.h, wait_spin_pays).  A writer that
 * took the global lock holds back before it sets WACTIVE while the readers
 * inside are not all running, as a BA writer does (ba.h, "Holding back");
 * one handed the lock by its node's previous writer finds WACTIVE set.
 *
 * An all-zero lock is not a valid lock: cohort_rw_init is always called.
 */
#ifndef LIBBRAVO_COHORT_H
#define LIBBRAVO_COHORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wait.h"

#define COHORT_SECTOR 128
/* The waiting-node mask in gstate has 32 bits. */
#define COHORT_MAX_NODES 32u
/*
 * Local hand-offs per global tenure.  64 amortizes a global acquisition
 * (and the remote cache misses of draining every node) over 65 writers,
 * while a writer of another node waits for at most 65 acquisitions per
 * node ahead of it.
 */
#define COHORT_DEFAULT_HANDOFF_BOUND 64u

#define COHORT_WACTIVE   UINT32_C(0x1)
#define COHORT_RPARK     UINT32_C(0x2)

#define COHORT_GPARK     UINT64_C(0x80000000)
#define COHORT_GOWNER    UINT64_C(0x7fffffff)
#define COHORT_GLOW      UINT64_C(0xffffffff)
#define COHORT_GWAITING(node) (UINT64_C(1) << (32 + (node)))

#define COHORT_RI_INC    UINT32_C(0x2)
#define COHORT_WPARK     UINT32_C(0x1)

#define COHORT_LLOCKED   UINT32_C(0x1)
#define COHORT_LGPASS    UINT32_C(0x2)
#define COHORT_LWAITER   UINT32_C(0x4)

struct cohort_central {
	_Alignas(COHORT_SECTOR) _Atomic uint32_t wstate;
};

struct cohort_global {
	_Alignas(COHORT_SECTOR) _Atomic uint64_t gstate;
	_Atomic uint32_t wowner;
	uint32_t writer_node; /* the writer inside: its node (its own to write) */
	_Atomic uint32_t streak;
	uint32_t nnodes;
	uint32_t handoff_bound;
	_Atomic uint64_t handoffs;
};

struct cohort_indicator {
	_Alignas(COHORT_SECTOR) _Atomic uint32_t ingress;
	_Atomic uint32_t egress;
};

struct cohort_local {
	_Alignas(COHORT_SECTOR) _Atomic uint32_t lstate;
};

struct cohort_node {
	struct cohort_indicator ri;
	struct cohort_local local;
};

struct cohort_rw {
	struct cohort_central central;
	struct cohort_global global;
	struct cohort_node node[]; /* nnodes of them */
};

/* Bytes for a lock with nnodes nodes (1..COHORT_MAX_NODES), a multiple of 128. */
size_t cohort_rw_size(unsigned nnodes);

/*
 * l: 128-byte aligned memory of cohort_rw_size(nnodes) bytes, any content.
 * handoff_bound: consecutive local hand-offs allowed (0: never hand off).
 */
void cohort_rw_init(struct cohort_rw *l, unsigned nnodes, unsigned handoff_bound);

void cohort_rw_read_unlock_wake(struct cohort_rw *l, unsigned node);

static inline void cohort_rw_read_unlock(struct cohort_rw *l, unsigned node)
{
	/* Release: the critical section happens before the writer's drain. */
	uint32_t old = atomic_fetch_add_explicit(&l->node[node].ri.egress, COHORT_RI_INC,
						 memory_order_release);

	if (old & COHORT_WPARK)
		cohort_rw_read_unlock_wake(l, node);
}

/*
 * Arrive on node's indicator and re-check for a writer; back out (waking a
 * draining writer if need be) and return false if one became active.
 */
static inline bool cohort_rw_read_enter(struct cohort_rw *l, unsigned node)
{
	/* seq_cst arrival, then seq_cst check: the reader's half of the Dekker pair. */
	atomic_fetch_add_explicit(&l->node[node].ri.ingress, COHORT_RI_INC, memory_order_seq_cst);
	if (!(atomic_load_explicit(&l->central.wstate, memory_order_seq_cst) & COHORT_WACTIVE))
		return true;
	cohort_rw_read_unlock(l, node);
	return false;
}

/* 0, or ETIMEDOUT when dl passes first (then nothing is held). */
int cohort_rw_read_lock_slowpath(struct cohort_rw *l, unsigned node, const struct deadline *dl);

static inline int cohort_rw_read_lock(struct cohort_rw *l, unsigned node,
				      const struct deadline *dl)
{
	/* Relaxed: only a hint; cohort_rw_read_enter re-checks with seq_cst. */
	if (!(atomic_load_explicit(&l->central.wstate, memory_order_relaxed) & COHORT_WACTIVE) &&
	    cohort_rw_read_enter(l, node))
		return 0;
	return cohort_rw_read_lock_slowpath(l, node, dl);
}

/* A read of a lock whose writer side this thread holds (see Guests above). */
bool cohort_rw_read_guest(struct cohort_rw *l, unsigned node);

static inline bool cohort_rw_read_trylock(struct cohort_rw *l, unsigned node)
{
	if (!(atomic_load_explicit(&l->central.wstate, memory_order_relaxed) & COHORT_WACTIVE) &&
	    cohort_rw_read_enter(l, node))
		return true;
	return wait_writer_pending_is(l) && cohort_rw_read_guest(l, node);
}

/* 0, or ETIMEDOUT when dl passes first (then nothing is held). */
int cohort_rw_write_lock(struct cohort_rw *l, unsigned node, const struct deadline *dl);
bool cohort_rw_write_trylock(struct cohort_rw *l, unsigned node);
/* node: the node passed to the write lock. */
void cohort_rw_write_unlock(struct cohort_rw *l, unsigned node);

/*
 * Where the writer inside keeps the node it passes to the unlock: write
 * holds carry no per-acquisition word out of the lock (its caller names
 * them by thread id).  The cohort mutex orders it from writer to writer.
 */
static inline void cohort_rw_set_writer_node(struct cohort_rw *l, unsigned node)
{
	l->global.writer_node = node;
}

static inline unsigned cohort_rw_writer_node(struct cohort_rw *l)
{
	return l->global.writer_node;
}

/* True if nobody holds or waits for the lock (a racy snapshot). */
bool cohort_rw_is_idle(struct cohort_rw *l);

/*
 * Readers of node that arrived and have not left (a racy snapshot), for
 * releasing a read hold on behalf of another thread.  It may count short
 * (a negative count is 0), never long, except for a reader that found a
 * writer active and is backing out, for the instant between its arrival
 * and its departure.
 */
static inline uint32_t cohort_rw_readers_present(struct cohort_rw *l, unsigned node)
{
	/* Arrivals first: a reader coming and going in between is not counted. */
	uint32_t in = atomic_load_explicit(&l->node[node].ri.ingress, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->node[node].ri.egress, memory_order_acquire);
	uint32_t n = ((in - (out & ~COHORT_WPARK)) / COHORT_RI_INC) & 0x7fffffffu;

	return n < 0x40000000u ? n : 0;
}

#endif
