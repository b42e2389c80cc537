# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/unit/: the algorithms and pieces of src/, without preload ----
# Check programs linked against locks/liblocks.la (or one object of src/);
# each runs its suite in fork mode (tests/lib/check_run.h).
unit_tests = tests/unit/test_wait tests/unit/test_ba tests/unit/test_bravo \
	tests/unit/test_bravo_pthread tests/unit/test_cohort tests/unit/test_percpu tests/unit/test_stats_hist \
	tests/unit/test_mt19937 tests/unit/test_symbolize tests/unit/test_table_lock
unit_headers = tests/unit/harness.h tests/unit/bravo_harness.h tests/unit/invariant.h \
	tests/unit/timespec_util.h tests/lib/check_run.h
unit_cflags = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(srcdir)/locks
unit_ldadd = locks/liblocks.la $(CHECK_LIBS)
tests_unit_test_wait_SOURCES = tests/unit/test_wait.c $(unit_headers)
tests_unit_test_wait_CFLAGS = $(unit_cflags)
tests_unit_test_wait_LDADD = $(unit_ldadd)
tests_unit_test_ba_SOURCES = tests/unit/test_ba.c $(unit_headers)
tests_unit_test_ba_CFLAGS = $(unit_cflags)
tests_unit_test_ba_LDADD = $(unit_ldadd)
tests_unit_test_bravo_SOURCES = tests/unit/test_bravo.c $(unit_headers)
tests_unit_test_bravo_CFLAGS = $(unit_cflags)
tests_unit_test_bravo_LDADD = $(unit_ldadd)
# BRAVO over glibc's own rwlock, composed as BRAVO-pthread composes it.
tests_unit_test_bravo_pthread_SOURCES = tests/unit/test_bravo_pthread.c $(unit_headers)
tests_unit_test_bravo_pthread_CFLAGS = $(unit_cflags)
tests_unit_test_bravo_pthread_LDADD = $(unit_ldadd)
tests_unit_test_cohort_SOURCES = tests/unit/test_cohort.c $(unit_headers)
tests_unit_test_cohort_CFLAGS = $(unit_cflags)
tests_unit_test_cohort_LDADD = $(unit_ldadd)
tests_unit_test_percpu_SOURCES = tests/unit/test_percpu.c $(unit_headers)
tests_unit_test_percpu_CFLAGS = $(unit_cflags)
tests_unit_test_percpu_LDADD = $(unit_ldadd)
tests_unit_test_stats_hist_SOURCES = tests/unit/test_stats_hist.c tests/lib/check_run.h
tests_unit_test_stats_hist_CFLAGS = $(unit_cflags)
tests_unit_test_stats_hist_LDADD = $(CHECK_LIBS)
# The tables' guard (src/interpose/table_lock.h), with the pool that takes one.
tests_unit_test_table_lock_SOURCES = tests/unit/test_table_lock.c tests/lib/check_run.h \
	src/interpose/pool.c src/interpose/pool.h src/interpose/table_lock.h
tests_unit_test_table_lock_CFLAGS = $(unit_cflags)
tests_unit_test_table_lock_LDADD = $(CHECK_LIBS)
# The Mersenne Twister of bench/ is std::mt19937's (RWBench's work unit).
tests_unit_test_mt19937_SOURCES = tests/unit/test_mt19937.c
tests_unit_test_mt19937_LDADD = bench/libbench.la
# The profile's names (src/diag/symbolize.c, src/diag/demangle.c) against addr2line's,
# on the test itself and on libraries it builds (cc, objcopy, strip).
tests_unit_test_symbolize_SOURCES = tests/unit/test_symbolize.c tests/lib/check_run.h \
	src/diag/symbolize.c src/diag/symbolize.h src/diag/demangle.c src/diag/demangle.h
tests_unit_test_symbolize_CFLAGS = $(unit_cflags) -g -fvisibility=hidden
tests_unit_test_symbolize_LDADD = $(CHECK_LIBS)
check_PROGRAMS += $(unit_tests)
TESTS += $(unit_tests)
