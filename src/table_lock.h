/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * table_lock.h - a pthread_mutex taken with every signal blocked, for the
 * library's own tables (handoff.c, profile.c): a signal handler that calls
 * an rwlock function may come to the same table on the same thread, and
 * would deadlock on a mutex its thread already holds.  Never an rwlock:
 * ours are interposed.
 */
#ifndef LIBBRAVO_TABLE_LOCK_H
#define LIBBRAVO_TABLE_LOCK_H

#include <pthread.h>
#include <signal.h>

static inline void table_lock(pthread_mutex_t *m, sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	pthread_mutex_lock(m);
}

static inline void table_unlock(pthread_mutex_t *m, const sigset_t *saved)
{
	pthread_mutex_unlock(m);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

#endif
