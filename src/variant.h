/*
 * variant.h - the lock algorithm behind the exported functions.
 *
 * Exactly one implementation is compiled into each shared object, chosen by
 * a -D switch (LIBBRAVO_VARIANT_*).  rwlock.c has already dealt with errno
 * rules, recursion and process-shared locks; these functions only lock.
 * *data is the per-acquisition word carried in the held-lock list from the
 * lock to its unlock.  Blocking calls return 0 or ETIMEDOUT; try-locks 0 or
 * EBUSY.
 */
#ifndef LIBBRAVO_VARIANT_H
#define LIBBRAVO_VARIANT_H

#include <pthread.h>
#include <stdint.h>

#include "../locks/wait.h"

extern const char variant_name[];

void variant_load(void); /* once, at load */
/* What the start-up line says about this variant ("table_slots=4096 ..."). */
const char *variant_detail(void);
int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr);
int variant_destroy(pthread_rwlock_t *rw); /* 0, or EBUSY if held */

int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl);
int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data);
void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data);
int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl);
int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data);
void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data);

#endif
