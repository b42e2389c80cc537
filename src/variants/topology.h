/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * topology.h - CPUs and NUMA nodes, read once (at load, or at the first
 * lock call if that comes first), for the variants that place readers by
 * where they run (Per-CPU, Cohort-RW).
 *
 * Nodes come from libnuma when the build has it and the kernel supports
 * it (from sysfs, as libnuma would, when the first call comes before
 * libnuma's own constructor has run); otherwise there is one node.  BRAVO_COHORT_NODES=K instead splits the
 * online CPUs into K contiguous blocks ("artificial nodes"), so the
 * multi-node paths run on a one-node machine.  Lookups on the lock paths
 * are a sched_getcpu() (rseq-backed in glibc >= 2.35) and a table read.
 */
#ifndef LIBBRAVO_TOPOLOGY_H
#define LIBBRAVO_TOPOLOGY_H

#include <sched.h>
#include <stdint.h>

#include "../../locks/hidden.h"

struct topology {
	unsigned ncpus;        /* online CPUs at load, >= 1 */
	unsigned nnodes;       /* >= 1 */
	unsigned ncpu_ids;     /* size of node_of_cpu */
	const char *node_source; /* "libnuma", "sysfs", "artificial" or "single" */
	uint16_t *node_of_cpu; /* CPU id -> node */
};

extern struct topology topology LIBBRAVO_HIDDEN;

/* Read the machine (and BRAVO_COHORT_NODES, so config_load() first); idempotent. */
void topology_load(void);

static inline unsigned topology_cpu(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : (unsigned)cpu;
}

/* The caller's CPU, folded into [0, ncpus): a hot-plugged CPU maps safely. */
static inline unsigned topology_cpu_index(void)
{
	unsigned cpu = topology_cpu();

	return cpu < topology.ncpus ? cpu : cpu % topology.ncpus;
}

static inline unsigned topology_node(void)
{
	unsigned cpu = topology_cpu();

	if (cpu >= topology.ncpu_ids)
		cpu %= topology.ncpu_ids;
	return topology.node_of_cpu[cpu];
}

#endif
