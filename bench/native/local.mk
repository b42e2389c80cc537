# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
#
# ---- bench/native (issue 13): the variants among the native rwlocks ----
# bench/native/native-rw runs the no-harm workload on pthread_rwlock_t (glibc,
# or a variant under LD_PRELOAD), std::shared_mutex and, where configure
# found them, the rwlocks of Concurrency Kit, oneTBB and Abseil.
# bench/drivers/native-compare puts them in one table; bench/README.md has both.
if NATIVE_BENCH
noinst_PROGRAMS += bench/native/native-rw
bench_native_native_rw_SOURCES = bench/native/native-rw.cc \
	bench/native/ck-bytelock.c bench/native/ck-bytelock.h
bench_native_native_rw_CPPFLAGS = $(AM_CPPFLAGS) $(NATIVE_CPPFLAGS)
bench_native_native_rw_CXXFLAGS = $(AM_CXXFLAGS) -std=gnu++17 $(NATIVE_CXXFLAGS)
bench_native_native_rw_LDADD = bench/libbench.la $(NATIVE_LIBS) -lm
native_bench_built = yes
else
# (tests/tools/bench/native-check reads this line to tell a skip from a failure)
native_bench_built = no
endif

dist_noinst_SCRIPTS += bench/drivers/native-compare


# make native-compare                       the default table (~14 min on 2 CPUs)
# NATIVE_ARGS="--runs 3 --duration 0.3"   more bench/drivers/native-compare options
native-compare: all
	@if test '$(native_bench_built)' != yes; then \
		echo "native-compare: configured with --disable-native-bench: bench/native/native-rw is not built;" >&2; \
		echo "native-compare: install libck-dev libtbb-dev libabsl-dev, re-run ./configure without it, make" >&2; \
		exit 1; \
	fi; \
	if test -z '$(NATIVE_FOUND)'; then \
		echo "native-compare: configure found none of Concurrency Kit, oneTBB, Abseil: the table would" >&2; \
		echo "native-compare: hold only glibc, the variants and std::shared_mutex.  Install" >&2; \
		echo "native-compare: libck-dev libtbb-dev libabsl-dev (scripts/setup-debian does)," >&2; \
		echo "native-compare: re-run ./configure and make, or run bench/drivers/native-compare directly." >&2; \
		exit 1; \
	fi; \
	test -z '$(NATIVE_MISSING)' || \
		echo "native-compare: note: not built in (not found by configure): $(NATIVE_MISSING)" >&2; \
	'$(srcdir)/bench/drivers/native-compare' --builddir '$(abs_top_builddir)' $(NATIVE_ARGS)
.PHONY: native-compare
