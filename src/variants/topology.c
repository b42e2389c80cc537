/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * topology.c - CPU and NUMA node discovery (see topology.h).
 */
/* Only the variants with heap blocks (src/variants/NAME.h) need this file. */
#ifdef LIBBRAVO_HEAP_BLOCKS
#include "topology.h"

#include <dirent.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * libnuma where configure found it, for the variants that ask for nodes:
 * reached through dlopen and closed again once the nodes are read, so
 * that no variant links it.  Linked, its destructor would free memory at
 * every exit, and an exit() from a signal handler that interrupted malloc
 * would then hang there (libbravo(7), NOTES).
 */
#if defined(HAVE_LIBNUMA) && defined(LIBBRAVO_NUMA_NODES)
#define TOPOLOGY_LIBNUMA 1
#include <dlfcn.h>
#include <numa.h>
#endif

#include "../interpose/config.h"
#include "../interpose/pool.h"

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

#ifdef TOPOLOGY_LIBNUMA
/* Parse a sysfs CPU list ("0-3,8,10-11") into table[c] = node, c < ids. */
static void mark_cpulist(const char *list, uint16_t *table, unsigned ids, uint16_t node)
{
	const char *p = list;

	while (*p >= '0' && *p <= '9') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (unsigned long c = lo; c <= hi && c < ids; c++)
			table[c] = node;
		if (*end != ',')
			break;
		p = end + 1;
	}
}

/*
 * The nodes from /sys/devices/system/node/node<N>/cpulist: the machine's
 * NUMA nodes without libnuma.  0 if sysfs does not say.
 */
static unsigned read_sysfs_nodes(uint16_t *table, unsigned ids)
{
	DIR *d = opendir("/sys/devices/system/node");
	struct dirent *de;
	unsigned nodes = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[320], list[4096];
		unsigned long n;
		char *end;
		FILE *f;

		if (strncmp(de->d_name, "node", 4) != 0 || de->d_name[4] < '0' || de->d_name[4] > '9')
			continue;
		n = strtoul(de->d_name + 4, &end, 10);
		if (*end != '\0' || n >= MAX_NODES)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(list, sizeof(list), f))
			mark_cpulist(list, table, ids, (uint16_t)n);
		fclose(f);
		if (n + 1 > nodes)
			nodes = (unsigned)n + 1;
	}
	closedir(d);
	return nodes;
}
#endif

#ifdef TOPOLOGY_LIBNUMA
/* The nodes from libnuma, opened and closed here; 0 if it cannot say. */
static unsigned read_libnuma(uint16_t *table, unsigned ids)
{
	void *lib = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
	__typeof__(numa_available) *available;
	__typeof__(numa_num_possible_cpus) *possible_cpus;
	__typeof__(numa_max_node) *max_node;
	__typeof__(numa_node_of_cpu) *node_of_cpu;
	unsigned nodes = 0;

	if (!lib)
		return 0;
	available = (__typeof__(available))dlsym(lib, "numa_available");
	possible_cpus = (__typeof__(possible_cpus))dlsym(lib, "numa_num_possible_cpus");
	max_node = (__typeof__(max_node))dlsym(lib, "numa_max_node");
	node_of_cpu = (__typeof__(node_of_cpu))dlsym(lib, "numa_node_of_cpu");
	/* Its constructor ran at dlopen: its masks are sized (a first call before it made libnuma exit). */
	if (available && possible_cpus && max_node && node_of_cpu && available() >= 0 &&
	    possible_cpus() > 0 && max_node() >= 0) {
		nodes = (unsigned)max_node() + 1;
		if (nodes > MAX_NODES)
			nodes = MAX_NODES;
		for (unsigned c = 0; c < ids; c++) {
			int node = node_of_cpu((int)c);

			table[c] = (uint16_t)(node < 0 || (unsigned)node >= nodes ? 0 : node);
		}
	}
	dlclose(lib);
	return nodes;
}
#endif

/* The machine's nodes: libnuma's answer, else sysfs's, else one. */
static unsigned read_numa(uint16_t *table, unsigned ids, const char **source)
{
	for (unsigned c = 0; c < ids; c++)
		table[c] = 0;
#ifdef TOPOLOGY_LIBNUMA
	unsigned nodes = read_libnuma(table, ids);

	if (nodes >= 1) {
		*source = "libnuma";
		return nodes;
	}
	nodes = read_sysfs_nodes(table, ids);
	if (nodes >= 1) {
		*source = "sysfs";
		return nodes;
	}
	for (unsigned c = 0; c < ids; c++)
		table[c] = 0;
#endif
	*source = "single";
	return 1;
}

static void topology_read(void)
{
	unsigned ncpus = online_cpus(), ids = cpu_ids(ncpus);
	uint16_t *table = pool_alloc(ids * sizeof(*table));

	if (!table)
		return; /* keep the single-node default */
	topology.ncpus = ncpus;
	if (config.cohort_nodes) {
		split_artificial(table, ids, ncpus, config.cohort_nodes);
		topology.nnodes = config.cohort_nodes;
		topology.node_source = "artificial";
	} else {
		const char *source;

		topology.nnodes = read_numa(table, ids, &source);
		topology.node_source = topology.nnodes > 1 ? source : "single";
	}
	/* The table first: a reader that sees the new count sees a table that big. */
	topology.node_of_cpu = table;
	atomic_thread_fence(memory_order_release);
	topology.ncpu_ids = ids;
}

void topology_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, topology_read);
}

#endif /* LIBBRAVO_HEAP_BLOCKS */
