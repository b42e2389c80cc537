/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * table_lock.h - a pthread_mutex for the library's own tables (pool.c,
 * registry.c, handoff.c, stats.c, profile.c), taken with every signal
 * blocked and cancellation disabled:
 *  - a signal handler that calls an rwlock function may come to the same
 *    table on the same thread, and would deadlock on a mutex its thread
 *    already holds;
 *  - an asynchronous cancellation (which no mask blocks) would end the
 *    thread with the mutex held, and every other thread would wait for
 *    it for ever.
 * Never an rwlock: ours are interposed.  Held across fork by each table's
 * fork handlers (table_fork_prepare and the two table_fork_resume calls).
 */
#ifndef LIBBRAVO_TABLE_LOCK_H
#define LIBBRAVO_TABLE_LOCK_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "../../locks/hidden.h"

struct table_guard {
	sigset_t mask;
	int cancel_state;
};

/*
 * The guards this thread is inside (table_guard_begin/end): while
 * nonzero, signals are blocked and cancellation disabled already, and
 * table_lock makes no system call.  Raised after the mask is in force and
 * lowered before it is lifted, so no handler of this thread ever sees it
 * nonzero (pool.c).  Guards end in the reverse order of their begins (the
 * atfork handlers' too: prepare runs in the reverse order of parent and
 * child), so the one that ends at 0 is the one that began at 0, the one
 * whose guard holds the mask and cancel state to put back.
 */
extern __thread unsigned table_guarded
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/*
 * Block every signal and disable cancellation around a sequence of table
 * operations (registry.c: a heap lock's first use takes its shard's mutex
 * twice and the pool's twice; alone, each would block and unblock: eight
 * rt_sigprocmask calls instead of two).  Nests.
 */
static inline void table_guard_begin(struct table_guard *g)
{
	sigset_t all;

	if (table_guarded == 0) {
		sigfillset(&all);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &g->cancel_state);
		pthread_sigmask(SIG_SETMASK, &all, &g->mask);
	}
	table_guarded++;
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void table_guard_end(const struct table_guard *g)
{
	atomic_signal_fence(memory_order_seq_cst);
	if (--table_guarded == 0) {
		pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
		pthread_setcancelstate(g->cancel_state, NULL);
	}
}

static inline void table_lock(pthread_mutex_t *m, struct table_guard *g)
{
	table_guard_begin(g);
	pthread_mutex_lock(m);
}

static inline void table_unlock(pthread_mutex_t *m, const struct table_guard *g)
{
	pthread_mutex_unlock(m);
	table_guard_end(g);
}

#endif
