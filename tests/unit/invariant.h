/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * invariant.h - the ck-style invariant every lock's stress test checks:
 * a writer moves a shared counter away from zero and back, readers assert
 * they never see a writer (or the counter off zero), never two writers;
 * the totals let each test check its counts add up.  Shared by the unit
 * tests; each embeds a struct invariant in its own stress state.
 */
#ifndef LIBBRAVO_TESTS_INVARIANT_H
#define LIBBRAVO_TESTS_INVARIANT_H

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "../../locks/wait.h"

struct invariant {
	atomic_uint writers_in;
	atomic_uint readers_in;
	atomic_uint plain;
	unsigned long wtotal; /* bumped only under the write lock */
	atomic_ulong rtotal;
	atomic_uint violations;
	char first_violation[128];
	atomic_flag msg_taken;
};

static void violation(struct invariant *v, const char *what)
{
	atomic_fetch_add(&v->violations, 1);
	if (!atomic_flag_test_and_set(&v->msg_taken))
		snprintf(v->first_violation, sizeof(v->first_violation), "%s", what);
}

static unsigned xorshift(unsigned *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * Hold the lock for a while; now and then give the CPU away while holding
 * it, so that on a machine with few CPUs other threads find it taken and go
 * through the blocking, parking, hand-off and time-out paths.
 */
static void stress_dwell(unsigned x)
{
	if ((x >> 24) % 8 == 0)
		sched_yield();
	else
		for (int i = 0; i < 50; i++)
			cpu_relax();
}

static void invariant_read_section(struct invariant *v, unsigned x)
{
	atomic_fetch_add(&v->readers_in, 1);
	if (atomic_load(&v->writers_in) != 0)
		violation(v, "reader saw a writer inside");
	if (atomic_load_explicit(&v->plain, memory_order_relaxed) != 0)
		violation(v, "reader saw the writers' counter away from zero");
	stress_dwell(x);
	if (atomic_load(&v->writers_in) != 0)
		violation(v, "reader saw a writer inside");
	atomic_fetch_add_explicit(&v->rtotal, 1, memory_order_relaxed);
	atomic_fetch_sub(&v->readers_in, 1);
}

static void invariant_write_section(struct invariant *v, unsigned x)
{
	if (atomic_fetch_add(&v->writers_in, 1) != 0)
		violation(v, "two writers inside");
	if (atomic_load(&v->readers_in) != 0)
		violation(v, "writer saw a reader inside");
	if (atomic_load_explicit(&v->plain, memory_order_relaxed) != 0)
		violation(v, "writer found the counter away from zero");
	atomic_store_explicit(&v->plain, 1, memory_order_relaxed);
	stress_dwell(x);
	if (atomic_load_explicit(&v->plain, memory_order_relaxed) != 1)
		violation(v, "another writer moved the counter");
	atomic_store_explicit(&v->plain, 0, memory_order_relaxed);
	v->wtotal++;
	if (atomic_load(&v->readers_in) != 0)
		violation(v, "writer saw a reader inside");
	atomic_fetch_sub(&v->writers_in, 1);
}

#endif
