/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bravo_harness.h - harness.h for the tests of the BRAVO wrapper
 * (locks/bravo.h): its word, bias and fast readers, and what the tests
 * over BA (test_bravo.c) and over glibc's rwlock (test_bravo_pthread.c)
 * both check.
 *
 * The including file first defines BRAVO_LOCK, its lock type: a struct
 * whose BRAVO word is b and whose lock underneath is u.  It then defines
 * the calls declared below (and take(), harness.h's).
 */
#ifndef LIBBRAVO_TESTS_BRAVO_HARNESS_H
#define LIBBRAVO_TESTS_BRAVO_HARNESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "../../locks/bravo.h"

/* The wrapper's calls on the lock, as the test composes it. */
static int rd_lock(BRAVO_LOCK *l, uintptr_t *cookie, const struct deadline *dl);
static bool rd_trylock(BRAVO_LOCK *l, uintptr_t *cookie);
static void rd_unlock(BRAVO_LOCK *l, uintptr_t cookie);
static bool wr_trylock(BRAVO_LOCK *l);
static void wr_unlock(BRAVO_LOCK *l);

static void give_back(struct acquisition *q)
{
	if (q->kind & ACT_WRITE)
		wr_unlock(q->lock);
	else
		rd_unlock(q->lock, q->cookie);
}

static inline uint64_t word_of(BRAVO_LOCK *l)
{
	return atomic_load(&l->b.word);
}

static inline bool biased(BRAVO_LOCK *l)
{
	return word_of(l) & BRAVO_RBIAS;
}

/* Take a read lock that enables bias (the lock's first slow-path read). */
static inline void enable_bias(BRAVO_LOCK *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	rd_unlock(l, cookie);
	ck_assert_msg(biased(l), "a slow-path read did not enable bias");
}

/* Take a fast-path read lock (bias must be on); returns the cookie. */
static inline uintptr_t fast_read(BRAVO_LOCK *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	ck_assert_msg(cookie != 0, "read took the slow path with bias on");
	return cookie;
}

/* Bias on, and a fast reader of this thread inside: its cookie. */
static inline uintptr_t fast_reader_in(BRAVO_LOCK *l)
{
	enable_bias(l);
	return fast_read(l);
}

/*
 * A writer revokes bias, and waits until the fast reader inside has left
 * (its fast readers published as scope says).
 */
static inline void writer_waits_for_the_fast_reader(BRAVO_LOCK *l, enum vr_scope scope)
{
	uintptr_t cookie = fast_reader_in(l);
	struct actor w;

	start_writer(&w, l, .holds = true);
	WAIT_BLOCKED(&w, !biased(l)); /* the writer holds the lock underneath and is revoking */
	ck_assert_msg(stays_out(&w), "writer entered while a fast reader holds");
	rd_unlock(l, cookie);
	WAIT_UNTIL(entered(&w));
	ck_assert(!bravo_has_fast_readers(&l->b, scope, &l->u));
	ck_assert_int_eq(actor_finish(&w), 0);
}

#endif
