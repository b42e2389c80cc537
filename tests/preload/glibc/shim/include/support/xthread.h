/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: pthread calls that end the test on error.  */
#ifndef LIBBRAVO_GLIBC_SHIM_XTHREAD_H
#define LIBBRAVO_GLIBC_SHIM_XTHREAD_H
#include <support/shim.h>

pthread_t xpthread_create (pthread_attr_t *attr, void *(*fn) (void *),
                           void *arg);
void *xpthread_join (pthread_t thr);
void xpthread_barrier_init (pthread_barrier_t *b,
                            pthread_barrierattr_t *attr, unsigned int count);
int xpthread_barrier_wait (pthread_barrier_t *b);
void xpthread_mutex_lock (pthread_mutex_t *m);
void xpthread_mutex_unlock (pthread_mutex_t *m);
void xpthread_rwlockattr_init (pthread_rwlockattr_t *a);
void xpthread_rwlockattr_setkind_np (pthread_rwlockattr_t *a, int kind);
void xpthread_rwlock_init (pthread_rwlock_t *l,
                           const pthread_rwlockattr_t *a);
void xpthread_rwlock_rdlock (pthread_rwlock_t *l);
void xpthread_rwlock_wrlock (pthread_rwlock_t *l);
void xpthread_rwlock_unlock (pthread_rwlock_t *l);
void xpthread_rwlock_destroy (pthread_rwlock_t *l);
#endif
