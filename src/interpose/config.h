/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * config.h - settings read once from the environment at load.
 *
 *   BRAVO_N           slow-down guard N (default 9: writers slowed <= ~10%)
 *   BRAVO_TABLE_SIZE  visible readers table slots, power of two >= 4096
 *                     (default: 64 per CPU, at least 4096)
 *   BRAVO_TABLE       2d (default: a row of cells per CPU) or 1d (the
 *                     paper's one array): the visible readers table
 *   BRAVO_TABLE_WAYS  2d: slots per cell, for threads sharing a CPU; a
 *                     power of two in 1..64 (default 8; 1: the paper's 2D)
 *   BRAVO_POLICY      adaptive (default) or classic (the paper's N*T
 *                     rule): when bias comes back after a revocation
 *   BRAVO_PAYBACK     adaptive policy: bias counts as paid after about
 *                     this many fast reads, sampled per thread (16)
 *   BRAVO_SPIN        pause iterations before a waiter parks (default 128)
 *   BRAVO_VERBOSE     1: one start-up line on stderr (variant, sizes, CPUs)
 *   BRAVO_STATS       1: statistics, printed at exit (stats.h)
 *   BRAVO_STATS_FILE  statistics to this file (appended) instead of stderr;
 *                     a path longer than PATH_MAX - 1: one line on stderr,
 *                     statistics off
 *   BRAVO_CHECK       1: strict mode (config.strict): report misuse with
 *                     POSIX's recommended errors and one line on stderr
 *   BRAVO_PROFILE     1: the per-lock contention profile, printed at exit
 *                     (profile.h)
 *   BRAVO_PROFILE_FILE the profile to this file (appended) as CSV instead
 *                     of the table on stderr; turns the profile on; a path
 *                     longer than PATH_MAX - 1: one line, profile off
 *   BRAVO_PROFILE_TOP the N busiest locks in the report (default 10; 0:
 *                     every lock)
 *   BRAVO_PROFILE_SORT wait (default), acquisitions, slow-reads,
 *                     revocations or writer-share: what "busiest" means
 *   BRAVO_PROFILE_LOCKS the most locks the profile keeps a record of
 *                     (default 16384); the least acquired are evicted
 *   BRAVO_PROFILE_SAMPLE N: the profile counts one uncontended acquisition
 *                     in N, each as N (default 64; 1: every acquisition,
 *                     every call on the full path)
 *   BRAVO_COHORT_NODES   Cohort-RW: split the online CPUs into K artificial
 *                     NUMA nodes (default: the machine's nodes, via libnuma)
 *   BRAVO_COHORT_HANDOFF Cohort-RW: local writer hand-offs before the global
 *                     lock is passed to another node (default 64)
 *
 * A malformed or out-of-range value gets one line on stderr naming the
 * variable and the default used; the program keeps running.
 *
 * All are read with secure_getenv: a privileged (AT_SECURE) process
 * ignores them and runs with the defaults, silently, and removes them
 * from its environment (config_scrub_secure).
 */
#ifndef LIBBRAVO_CONFIG_H
#define LIBBRAVO_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "../../locks/hidden.h"

struct config {
	unsigned slowdown_n;
	uint32_t table_slots;
	unsigned spin;
	bool verbose;
	bool stats;
	const char *stats_file; /* NULL: stderr; else a copy, < PATH_MAX */
	bool strict;            /* BRAVO_CHECK=1 */
	unsigned cohort_nodes;   /* 0: the machine's */
	unsigned cohort_handoff;
	/* Last, so that the fields above keep their offsets. */
	bool profile;           /* BRAVO_PROFILE=1 or BRAVO_PROFILE_FILE */
	const char *profile_file; /* NULL: the table on stderr; else a copy, < PATH_MAX */
	unsigned profile_top;   /* 0: every lock */
	unsigned profile_sort;  /* enum profile_sort (profile.h) */
	unsigned profile_locks;
	unsigned profile_sample; /* 1: exact; N: one uncontended acquisition in N */
};

extern struct config config LIBBRAVO_HIDDEN;

/*
 * Fill in config from the environment, once: idempotent, safe to call
 * from any thread and more than once (a pthread_once inside; the later
 * calls wait for the first one to finish, then return).  Takes no rwlock,
 * allocates nothing; errno is preserved.
 */
void config_load(void);
/* A privileged process: remove every BRAVO_* variable from the environment. */
void config_scrub_secure(void);
void config_announce(const char *variant, const char *detail);
/* BRAVO_TABLE and BRAVO_POLICY in effect, as their values are spelled. */
const char *config_table_name(void);
const char *config_policy_name(void);
/* BRAVO_PROFILE_SORT's values, by enum profile_sort. */
extern const char *const config_profile_sort_names[5] LIBBRAVO_HIDDEN;

#endif
