/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu.h - which CPU the calling thread runs on, cheaply: platform glue for
 * the per-CPU rows of BRAVO-2D (bravo.h).
 *
 * glibc 2.35 and later register an rseq area for every thread, and the
 * kernel keeps its cpu_id_start field current: reading it is one load at
 * a fixed offset from the thread pointer (__rseq_offset).  Where rseq is
 * not registered (an older kernel, glibc.pthread.rseq=0, valgrind), the
 * word read instead is a per-thread row number of our own, spread by a
 * multiplicative hash of a thread counter and given the first time the
 * thread takes a slow path (cpu_row_assign), so threads still spread over
 * the rows (until then a thread reads row 0: slower, never wrong).
 *
 * The answer is a hint: the thread may migrate right after reading it.
 * BRAVO only uses it to pick a slot, and carries the slot to the unlock.
 */
#ifndef LIBBRAVO_CPU_H
#define LIBBRAVO_CPU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hidden.h"

/* Offset from the thread pointer of the 32-bit word cpu_hint() reads. */
extern ptrdiff_t cpu_word_offset LIBBRAVO_HIDDEN;
/* Our own per-thread row number, used when rseq is not (or may not be). */
extern __thread uint32_t cpu_thread_row
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/*
 * Pick the word (once; later calls change nothing): rseq's if use_cpu and
 * the kernel keeps it, else the thread's own row (BRAVO-1D always: a random row per
 * thread makes the slot a hash of thread and lock).
 */
void cpu_hint_init(bool use_cpu);

static inline uint32_t cpu_hint(void)
{
	/* Relaxed: the kernel rewrites it on migration; any recent value will do. */
	return atomic_load_explicit((_Atomic uint32_t *)(void *)
				    ((char *)__builtin_thread_pointer() + cpu_word_offset),
				    memory_order_relaxed);
}

/* Give the thread a row of its own if it has none yet (slow paths call it). */
static inline void cpu_row_assign(void)
{
	void cpu_row_assign_slow(void);

	if (__builtin_expect(cpu_thread_row == 0, 0))
		cpu_row_assign_slow();
}

#endif
