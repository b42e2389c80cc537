/*
 * cpu.c - finding the current-CPU word (cpu.h).
 */
#include "cpu.h"

#include <stddef.h>
#include <sys/rseq.h>

ptrdiff_t cpu_word_offset;
bool cpu_from_rseq;
__thread uint32_t cpu_thread_row __attribute__((tls_model("initial-exec")));

static _Atomic uint32_t cpu_rows_given;

void cpu_hint_init(bool use_cpu)
{
	char *tp = __builtin_thread_pointer();

	if (use_cpu && __rseq_size > 0) {
		cpu_from_rseq = true;
		cpu_word_offset = __rseq_offset + (ptrdiff_t)offsetof(struct rseq, cpu_id_start);
	} else {
		cpu_from_rseq = false;
		cpu_word_offset = (char *)&cpu_thread_row - tp;
	}
}

void cpu_row_assign_slow(void)
{
	uint32_t n = atomic_fetch_add_explicit(&cpu_rows_given, 1, memory_order_relaxed) + 1;

	/* Odd multiplier: distinct for 2^32 threads, spread over the low bits. */
	cpu_thread_row = n * UINT32_C(0x9e3779b1);
}
