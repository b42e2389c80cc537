# automake fragment, included from Makefile.am
#
# ---- bench/: the benchmark programs of the BRAVO paper's section 5 ----
# Ordinary pthread programs; the lock is chosen by LD_PRELOAD alone.
# bench/README.md documents them.
noinst_LTLIBRARIES += bench/libbench.la
bench_libbench_la_SOURCES = bench/common.c bench/common.h bench/mt19937.c bench/mt19937.h

bench_programs = bench/alternator bench/rwbench
noinst_PROGRAMS += $(bench_programs)
bench_alternator_SOURCES = bench/alternator.c
bench_alternator_LDADD = bench/libbench.la -lm
bench_rwbench_SOURCES = bench/rwbench.c
bench_rwbench_LDADD = bench/libbench.la -lm

EXTRA_DIST += bench/README.md

bench_programs += bench/test_rwlock
noinst_PROGRAMS += bench/test_rwlock
bench_test_rwlock_SOURCES = bench/test_rwlock.c
bench_test_rwlock_LDADD = bench/libbench.la -lm
