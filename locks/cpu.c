/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu.c - finding the current-CPU word (cpu.h).
 */
#include "cpu.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/rseq.h>

ptrdiff_t cpu_word_offset;
__thread uint32_t cpu_thread_row __attribute__((tls_model("initial-exec")));

static _Atomic uint32_t cpu_rows_given;
static _Atomic bool cpu_use_rseq; /* every caller stores the same value */

static void cpu_word_pick(void)
{
	char *tp = __builtin_thread_pointer();

	if (atomic_load_explicit(&cpu_use_rseq, memory_order_relaxed) && __rseq_size > 0)
		cpu_word_offset = __rseq_offset + (ptrdiff_t)offsetof(struct rseq, cpu_id_start);
	else
		cpu_word_offset = (char *)&cpu_thread_row - tp;
}

/*
 * Once: the fast path reads cpu_word_offset with a plain load, ordered
 * after this store by the release that publishes the table (bravo.c).
 */
void cpu_hint_init(bool use_cpu)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* The layout is fixed before the first call; once orders this store. */
	atomic_store_explicit(&cpu_use_rseq, use_cpu, memory_order_relaxed);
	pthread_once(&once, cpu_word_pick);
}

void cpu_row_assign_slow(void)
{
	uint32_t n = atomic_fetch_add_explicit(&cpu_rows_given, 1, memory_order_relaxed) + 1;

	/* Odd multiplier: distinct for 2^32 threads, spread over the low bits. */
	cpu_thread_row = n * UINT32_C(0x9e3779b1);
}
