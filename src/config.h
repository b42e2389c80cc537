/*
 * config.h - settings read once from the environment at load.
 *
 *   BRAVO_N           slow-down guard N (default 9: writers slowed <= ~10%)
 *   BRAVO_TABLE_SIZE  visible readers table slots, power of two >= 4096
 *                     (default: 64 per CPU, at least 4096)
 *   BRAVO_SPIN        pause iterations before a waiter parks (default 128)
 *   BRAVO_VERBOSE     1: one start-up line on stderr (variant, sizes, CPUs)
 *   BRAVO_STATS       1: statistics, printed at exit (stats.h)
 *   BRAVO_STATS_FILE  statistics to this file (appended) instead of stderr
 *   BRAVO_COHORT_NODES   Cohort-RW: split the online CPUs into K artificial
 *                     NUMA nodes (default: the machine's nodes, via libnuma)
 *   BRAVO_COHORT_HANDOFF Cohort-RW: local writer hand-offs before the global
 *                     lock is passed to another node (default 64)
 *
 * A malformed or out-of-range value gets one line on stderr naming the
 * variable and the default used; the program keeps running.
 */
#ifndef LIBBRAVO_CONFIG_H
#define LIBBRAVO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

struct config {
	unsigned slowdown_n;
	uint32_t table_slots;
	unsigned spin;
	bool verbose;
	bool stats;
	bool strict;             /* BRAVO_CHECK=1: POSIX's errors and a line per misuse */
	const char *stats_file; /* NULL: stderr */
	unsigned cohort_nodes;   /* 0: the machine's */
	unsigned cohort_handoff;
};

extern struct config config;

void config_load(void);
void config_announce(const char *variant, const char *detail);

#endif
