/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: the two relaxed atomics glibc's internal tst-rwlock20
   uses, on the compiler's builtins.  */
#ifndef LIBBRAVO_GLIBC_SHIM_ATOMIC_H
#define LIBBRAVO_GLIBC_SHIM_ATOMIC_H
#define atomic_load_relaxed(p) __atomic_load_n ((p), __ATOMIC_RELAXED)
#define atomic_store_relaxed(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELAXED)
#endif
