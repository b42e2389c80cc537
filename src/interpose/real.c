/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * real.c - resolve glibc's rwlock functions (see real.h).
 *
 * dlsym(RTLD_NEXT) returns the default version (GLIBC_2.34 on glibc >= 2.34,
 * where libpthread moved into libc); the clock variants exist from glibc
 * 2.30 on and are emulated with the timed ones on older libraries.
 */
#include "real.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct real_rwlock real_rwlock;
atomic_bool real_resolved;

/*
 * The next definition after ours; if libc was loaded ahead of us (e.g.
 * LD_PRELOAD="libc.so.6 libbravo.so"), RTLD_NEXT cannot see it, so ask
 * libc itself.
 */
static void *next_symbol(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	void *libc;

	if (fn)
		return fn;
	libc = dlopen(LIBC_SO, RTLD_NOW | RTLD_NOLOAD);
	if (!libc)
		return NULL;
	fn = dlsym(libc, name);
	dlclose(libc);
	return fn;
}

static void *lookup(const char *name)
{
	void *fn = next_symbol(name);

	if (!fn) {
		/* Without glibc's rwlock nothing can work: say so once, loudly. */
		static const char msg[] = "libbravo: cannot resolve glibc's pthread_rwlock functions\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		abort();
	}
	return fn;
}

static int clock_emulated(int (*timed)(pthread_rwlock_t *, const struct timespec *),
			  pthread_rwlock_t *rw, clockid_t clk, const struct timespec *abstime)
{
	struct timespec now, mono, rt;

	if (clk == CLOCK_REALTIME)
		return timed(rw, abstime);
	if (clk != CLOCK_MONOTONIC)
		return EINVAL;
	if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)
		return EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &now);
	rt.tv_sec = now.tv_sec + (abstime->tv_sec - mono.tv_sec);
	rt.tv_nsec = now.tv_nsec + (abstime->tv_nsec - mono.tv_nsec);
	while (rt.tv_nsec < 0) {
		rt.tv_nsec += 1000000000;
		rt.tv_sec--;
	}
	while (rt.tv_nsec >= 1000000000) {
		rt.tv_nsec -= 1000000000;
		rt.tv_sec++;
	}
	return timed(rw, &rt);
}

static int emul_clockrdlock(pthread_rwlock_t *rw, clockid_t clk, const struct timespec *t)
{
	return clock_emulated(real_rwlock.timedrdlock, rw, clk, t);
}

static int emul_clockwrlock(pthread_rwlock_t *rw, clockid_t clk, const struct timespec *t)
{
	return clock_emulated(real_rwlock.timedwrlock, rw, clk, t);
}

static void resolve_once(void)
{
	struct real_rwlock r;

	r.init = lookup("pthread_rwlock_init");
	r.destroy = lookup("pthread_rwlock_destroy");
	r.rdlock = lookup("pthread_rwlock_rdlock");
	r.tryrdlock = lookup("pthread_rwlock_tryrdlock");
	r.timedrdlock = lookup("pthread_rwlock_timedrdlock");
	r.wrlock = lookup("pthread_rwlock_wrlock");
	r.trywrlock = lookup("pthread_rwlock_trywrlock");
	r.timedwrlock = lookup("pthread_rwlock_timedwrlock");
	r.unlock = lookup("pthread_rwlock_unlock");
	r.clockrdlock = next_symbol("pthread_rwlock_clockrdlock");
	r.clockwrlock = next_symbol("pthread_rwlock_clockwrlock");
	if (!r.clockrdlock)
		r.clockrdlock = emul_clockrdlock;
	if (!r.clockwrlock)
		r.clockwrlock = emul_clockwrlock;
	real_rwlock = r;
	atomic_store_explicit(&real_resolved, true, memory_order_release);
}

void real_resolve(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, resolve_once);
}
