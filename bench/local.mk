# SPDX-License-Identifier: BSD-2-Clause
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

# The "ideal" BRAVO-BA of figure 1, every lock its own visible readers
# table, is configure.ac's bench-only variant bravo-ba-private
# (src/libbravo-bravo-ba-private.la, variants.am): never installed.

bench_programs += bench/test_rwlock
noinst_PROGRAMS += bench/test_rwlock
bench_test_rwlock_SOURCES = bench/test_rwlock.c
bench_test_rwlock_LDADD = bench/libbench.la -lm

bench_programs += bench/interference
noinst_PROGRAMS += bench/interference
bench_interference_SOURCES = bench/interference.c
bench_interference_LDADD = bench/libbench.la -lm

bench_programs += bench/latency
noinst_PROGRAMS += bench/latency
bench_latency_SOURCES = bench/latency.c
bench_latency_LDADD = bench/libbench.la -lm

bench_programs += bench/rwlock-mb
noinst_PROGRAMS += bench/rwlock-mb
bench_rwlock_mb_SOURCES = bench/rwlock-mb.c
bench_rwlock_mb_LDADD = bench/libbench.la -lm

bench_programs += bench/noharm
noinst_PROGRAMS += bench/noharm
bench_noharm_SOURCES = bench/noharm.c
bench_noharm_LDADD = bench/libbench.la -lm

# One thread, one lock, N pairs: what bench/drivers/icount runs under callgrind.
noinst_PROGRAMS += bench/pairloop
bench_pairloop_SOURCES = bench/pairloop.c
bench_pairloop_LDADD = bench/libbench.la -lm
dist_noinst_SCRIPTS += bench/drivers/icount

