/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * under_ba.h - the BA phase-fair lock as the lock under BRAVO: the
 * struct rw_ops the generic wrapper (locks/bravo.h) calls on its slow
 * paths, for the variants that put BRAVO over BA (bravo-ba, and the
 * benchmark-only bravo-ba-private).  Static: each variant's calls through
 * it are resolved at compile time.
 */
#ifndef LIBBRAVO_UNDER_BA_H
#define LIBBRAVO_UNDER_BA_H
#include "../../locks/ba.h"
#include "../../locks/bravo.h"

static bool ba_under_guest_ok(void *u)
{
	return ba_guest_ok(u);
}

static int ba_under_read_lock(void *u, const struct deadline *dl)
{
	return ba_read_lock(u, dl);
}

static bool ba_under_read_trylock(void *u)
{
	return ba_read_trylock(u);
}

static void ba_under_read_unlock(void *u)
{
	ba_read_unlock(u);
}

/* Leaves the thread marked as u's waiting writer (bravo_write_lock's rule). */
static int ba_under_write_lock(void *u, const struct deadline *dl)
{
	return ba_write_lock_marking(u, dl);
}

static bool ba_under_write_trylock(void *u)
{
	return ba_write_trylock(u);
}

static void ba_under_write_unlock(void *u)
{
	ba_write_unlock(u);
}

/* BA as BRAVO's underlying lock, its fast readers publishing in table scope_. */
#define BA_RW_OPS(scope_) {                        \
	.scope = (scope_),                         \
	.guest_ok = ba_under_guest_ok,             \
	.read_lock = ba_under_read_lock,           \
	.read_trylock = ba_under_read_trylock,     \
	.read_unlock = ba_under_read_unlock,       \
	.write_lock = ba_under_write_lock,         \
	.write_trylock = ba_under_write_trylock,   \
	.write_unlock = ba_under_write_unlock,     \
}

static const struct rw_ops ba_under_ops = BA_RW_OPS(VR_SHARED);

#endif
