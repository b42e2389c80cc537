/*
 * topology.c - CPU and NUMA node discovery (see topology.h).
 */
#include "topology.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef HAVE_LIBNUMA
#include <numa.h>
#endif

#include "config.h"

#define MAX_NODES 1024

static uint16_t single_node_table[1];
struct topology topology = {
	.ncpus = 1, .nnodes = 1, .ncpu_ids = 1,
	.node_source = "single", .node_of_cpu = single_node_table,
};

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (unsigned)n;
}

static unsigned cpu_ids(unsigned ncpus)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n < (long)ncpus ? ncpus : (unsigned)n;
}

/* CPU c of n in K contiguous blocks. */
static void split_artificial(uint16_t *table, unsigned ids, unsigned ncpus, unsigned k)
{
	unsigned block = (ncpus + k - 1) / k;

	for (unsigned c = 0; c < ids; c++) {
		unsigned node = (c % ncpus) / block;

		table[c] = (uint16_t)(node < k ? node : k - 1);
	}
}

static unsigned read_numa(uint16_t *table, unsigned ids)
{
#ifdef HAVE_LIBNUMA
	if (numa_available() >= 0) {
		unsigned nodes = (unsigned)numa_max_node() + 1;

		if (nodes > MAX_NODES)
			nodes = MAX_NODES;
		for (unsigned c = 0; c < ids; c++) {
			int node = numa_node_of_cpu((int)c);

			table[c] = (uint16_t)(node < 0 || (unsigned)node >= nodes ? 0 : node);
		}
		return nodes;
	}
#endif
	for (unsigned c = 0; c < ids; c++)
		table[c] = 0;
	return 1;
}

static void topology_read(void)
{
	unsigned ncpus = online_cpus(), ids = cpu_ids(ncpus);
	uint16_t *table = calloc(ids, sizeof(*table));

	if (!table)
		return; /* keep the single-node default */
	topology.ncpus = ncpus;
	if (config.cohort_nodes) {
		split_artificial(table, ids, ncpus, config.cohort_nodes);
		topology.nnodes = config.cohort_nodes;
		topology.node_source = "artificial";
	} else {
		topology.nnodes = read_numa(table, ids);
		topology.node_source = topology.nnodes > 1 ? "libnuma" : "single";
	}
	topology.ncpu_ids = ids;
	topology.node_of_cpu = table;
}

void topology_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, topology_read);
}
