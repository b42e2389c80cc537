# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/fault/: what production programs do on a bad day ----
#
# Ordinary pthread programs (they know nothing of libbravo), each a list
# of checks named after the behaviour they assert: memory reused for a new
# lock after every kind of hold and hand-off, forks with thread ids
# recycled, private locks in shared memory, a thread holding 500,000
# locks, forks from every state, cancellation at every wait, signal
# handlers that take locks (first uses while malloc is interrupted, reads
# of a lock their thread is queued to write, storms), exits from handlers,
# thread-specific data destructors, memory exhaustion, system calls a
# sandbox refuses.  fault-check runs
# them under every variant and glibc (torture-check --suite fault);
# alloc-fault-check makes each of libbravo's allocations fail in turn
# (failalloc.so in front of it) on every path that allocates.

fault_programs = \
	tests/fault/address_reuse \
	tests/fault/fork_tid_reuse \
	tests/fault/shared_mapping \
	tests/fault/many_held \
	tests/fault/fork_states \
	tests/fault/cancel_waits \
	tests/fault/handler_locks \
	tests/fault/exit_paths \
	tests/fault/memory_exhaustion \
	tests/fault/alloc_paths \
	tests/fault/syscall_refusals
check_PROGRAMS += $(fault_programs)

fault_headers = tests/fault/fault.h tests/stress/torture.h tests/lib/test_util.h
tests_fault_address_reuse_SOURCES = tests/fault/address_reuse.c $(fault_headers)
tests_fault_fork_tid_reuse_SOURCES = tests/fault/fork_tid_reuse.c $(fault_headers)
tests_fault_shared_mapping_SOURCES = tests/fault/shared_mapping.c $(fault_headers)
tests_fault_many_held_SOURCES = tests/fault/many_held.c $(fault_headers)
tests_fault_fork_states_SOURCES = tests/fault/fork_states.c $(fault_headers)
tests_fault_cancel_waits_SOURCES = tests/fault/cancel_waits.c $(fault_headers)
tests_fault_handler_locks_SOURCES = tests/fault/handler_locks.c $(fault_headers)
tests_fault_exit_paths_SOURCES = tests/fault/exit_paths.c $(fault_headers)
tests_fault_memory_exhaustion_SOURCES = tests/fault/memory_exhaustion.c $(fault_headers)
tests_fault_alloc_paths_SOURCES = tests/fault/alloc_paths.c $(fault_headers)
tests_fault_syscall_refusals_SOURCES = tests/fault/syscall_refusals.c $(fault_headers)

# The allocation-failure shim, preloaded in front of libbravo by
# alloc-fault-check (a module: never installed).
check_LTLIBRARIES += tests/fault/failalloc.la
tests_fault_failalloc_la_SOURCES = tests/fault/failalloc.c
tests_fault_failalloc_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_fault_failalloc_la_LIBADD = $(LIBS)

TESTS += tests/fault/fault-check tests/fault/alloc-fault-check
EXTRA_DIST += tests/fault/fault-check tests/fault/alloc-fault-check
CLEANFILES += tests/fault/*.out tests/fault/*.err tests/fault/*.csv tests/fault/*.stats
clean-local: clean-fault-work
clean-fault-work:
	rm -rf tests/fault/alloc-fault-check.work
.PHONY: clean-fault-work
