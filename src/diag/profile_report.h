/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_report.h - the profile's report at exit (profile_report.c): the
 * records, summed over their shards (profile.c), ranked, named and written
 * as a table on stderr or as CSV to BRAVO_PROFILE_FILE.
 */
#ifndef LIBBRAVO_PROFILE_REPORT_H
#define LIBBRAVO_PROFILE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../locks/hidden.h"
#include "profile.h"

enum profile_state { PROFILE_LIVE, PROFILE_DESTROYED, PROFILE_REPLACED };

/* The slow-read causes, enum bravo_miss order. */
#define PROFILE_SLOW_CAUSES 5

/* One record, its counters summed. */
struct profile_row {
	uintptr_t lock;
	const void *site;
	uint32_t generation; /* 1, 2, ... for the lives at one address */
	uint32_t seq;        /* creation order */
	enum profile_kind kind;
	enum profile_state state;
	bool bias;           /* BRAVO's columns apply (a BRAVO variant, not process-shared) */
	uint64_t reads, read_fast, slow[PROFILE_SLOW_CAUSES], writes;
	uint64_t read_waits, read_wait_ns, read_wait_max;
	uint64_t write_waits, write_wait_ns, write_wait_max;
	uint64_t revocations, revocation_ns;
	uint64_t holds, hold_ns, hold_max;
};

struct profile_summary {
	const char *variant;
	uint32_t records;               /* rows kept (all of them, before the top N) */
	uint64_t evicted_lives;         /* lock lives evicted to make room for others */
	struct profile_row evicted;     /* what they counted (no lock, site or state) */
	uint32_t limit;                 /* config.profile_locks */
	unsigned top;                   /* 0: all */
	enum profile_sort sort;
	const char *path;               /* CSV to this file; NULL: the table on stderr */
};

/* Rank rows (reordered in place), keep the top ones, write them. */
void profile_report(struct profile_row *rows, const struct profile_summary *s) LIBBRAVO_HIDDEN;

#endif
