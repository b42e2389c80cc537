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

struct table_guard {
	sigset_t mask;
	int cancel_state;
};

static inline void table_lock(pthread_mutex_t *m, struct table_guard *g)
{
	sigset_t all;

	sigfillset(&all);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &g->cancel_state);
	pthread_sigmask(SIG_SETMASK, &all, &g->mask);
	pthread_mutex_lock(m);
}

static inline void table_unlock(pthread_mutex_t *m, const struct table_guard *g)
{
	pthread_mutex_unlock(m);
	pthread_sigmask(SIG_SETMASK, &g->mask, NULL);
	pthread_setcancelstate(g->cancel_state, NULL);
}

#endif
