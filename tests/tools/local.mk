# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/tools/: the launcher, A/B comparison, benchmarks, RocksDB
# harnesses, install and manual pages, as a user runs them ----

# bravo-run (launcher_test.sh), make install into a DESTDIR, the manual
# pages, Ctrl-C and sudo in the scripts.
tools_tests = tests/tools/launcher-check tests/tools/install-check tests/tools/man-check \
	tests/tools/interrupt-check
# A variant added to configure.ac's list is built, installed, tested and
# benchmarked with no other edit.
tools_tests += tests/tools/variant-list-check
EXTRA_DIST += tests/tools/launcher_test.sh

# bravo-run --compare (bravo-compare).  A program with a known,
# deterministic effect of the preload (it asks the dynamic linker whose
# pthread_rwlock_rdlock it got), and a static wrapper that drops LD_PRELOAD
# before exec (a run whose preload never takes effect).
compare_probes = tests/tools/compare/ab_probe tests/tools/compare/static_exec \
	tests/tools/compare/profile_probe
check_PROGRAMS += $(compare_probes)
tests_tools_compare_ab_probe_SOURCES = tests/tools/compare/ab_probe.c
tests_tools_compare_ab_probe_LDADD = -ldl
# Per-lock waits that follow from the lock's semantics (--profile).
tests_tools_compare_profile_probe_SOURCES = tests/tools/compare/profile_probe.c tests/lib/test_util.h
tests_tools_compare_profile_probe_CFLAGS = $(AM_CFLAGS) -g
tests_tools_compare_static_exec_SOURCES = tests/tools/compare/static_exec.c
tests_tools_compare_static_exec_LDFLAGS = -all-static
tools_tests += tests/tools/compare-check tests/tools/compare-stats-check \
	tests/tools/compare-runner-check
EXTRA_DIST += tests/tools/compare/compare_test.sh tests/tools/compare/stats_test.py \
	tests/tools/compare/runner_test.py

# Every tool answers --help, --version and a bad command line alike.
tools_tests += tests/tools/cli-check

# LICENSE, and an SPDX line in every source file.
tools_tests += tests/tools/license-check

# The benchmark programs and their drivers: every program under glibc and
# every variant, briefly (smoke); the figure sweep, the no-harm sweep, the
# scale sweep (--quick) and the native-lock table on short settings; the
# instruction-count loop.  native-check is skipped (77) when configure
# --disable-native-bench left the program out.
tools_tests += tests/tools/bench/smoke-check tests/tools/bench/sweep-check \
	tests/tools/bench/noharm-check tests/tools/bench/native-check \
	tests/tools/bench/pairloop-check tests/tools/bench/table-sweep-check \
	tests/tools/bench/scale-check

# The RocksDB harnesses, on fakes and on the real db_bench/hash_table_bench.
tools_tests += \
	tests/tools/rocksdb/db-bench-usage \
	tests/tools/rocksdb/db-bench-missing-binary \
	tests/tools/rocksdb/db-bench-unpreloaded \
	tests/tools/rocksdb/db-bench-interrupt \
	tests/tools/rocksdb/db-bench-two-variants \
	tests/tools/rocksdb/db-bench-profile \
	tests/tools/rocksdb/db-bench-summarize \
	tests/tools/rocksdb/hash-table-bench-usage \
	tests/tools/rocksdb/hash-table-bench-errors \
	tests/tools/rocksdb/hash-table-bench-parse \
	tests/tools/rocksdb/hash-table-bench-unpreloaded \
	tests/tools/rocksdb/hash-table-bench-interrupt \
	tests/tools/rocksdb/hash-table-bench-summarize
EXTRA_DIST += tests/tools/rocksdb/lib.sh tests/tools/rocksdb/fake-hash-table-bench

# The long runs (NAME.long), opt-in: `make check-long`, which CI runs
# after make check: automake's harness with these tests (bounded, 77 a
# skip) and a log of their own.  The real hash_table_bench: 2-3 minutes
# on 2 CPUs, nearly all of it the benchmark's own 13 GB pre-population,
# which no flag shortens; make check's fakes cover the harness itself.
long_tests = tests/tools/rocksdb/hash-table-bench-real.long
LONG_LOG_COMPILER = timeout 600 $(SHELL)
EXTRA_DIST += $(long_tests)
check-long:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(long_tests)' TEST_SUITE_LOG=test-suite-long.log
.PHONY: check-long

TESTS += $(tools_tests)
EXTRA_DIST += $(tools_tests)
