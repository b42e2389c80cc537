/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ck-bytelock.c - ck_bytelock_t's operations as functions (see ck-bytelock.h).
 * Empty unless configure found Concurrency Kit.
 */
#ifdef HAVE_NATIVE_CK
#include <ck_bytelock.h>

#include "ck-bytelock.h"

_Static_assert(sizeof(ck_bytelock_t) <= sizeof(native_bytelock), "ck_bytelock_t fits");
_Static_assert(_Alignof(ck_bytelock_t) <= _Alignof(native_bytelock), "ck_bytelock_t aligned");

void native_bytelock_init(native_bytelock *l)
{
	ck_bytelock_init((ck_bytelock_t *)l);
}

void native_bytelock_read_lock(native_bytelock *l, unsigned slot)
{
	ck_bytelock_read_lock((ck_bytelock_t *)l, slot);
}

void native_bytelock_read_unlock(native_bytelock *l, unsigned slot)
{
	ck_bytelock_read_unlock((ck_bytelock_t *)l, slot);
}

void native_bytelock_write_lock(native_bytelock *l, unsigned slot)
{
	ck_bytelock_write_lock((ck_bytelock_t *)l, slot);
}

void native_bytelock_write_unlock(native_bytelock *l)
{
	ck_bytelock_write_unlock((ck_bytelock_t *)l);
}
#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int native_bytelock_unused;
#endif
