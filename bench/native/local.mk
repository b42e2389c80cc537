# automake fragment, included from Makefile.am
#
# ---- bench/native (issue 13): the variants among the native rwlocks ----
# bench/native/native-rw runs the no-harm workload on pthread_rwlock_t (glibc,
# or a variant under LD_PRELOAD), std::shared_mutex and, where configure
# found them, the rwlocks of Concurrency Kit, oneTBB and Abseil.
# scripts/native-compare puts them in one table; bench/README.md has both.
if NATIVE_BENCH
noinst_PROGRAMS += bench/native/native-rw
bench_native_native_rw_SOURCES = bench/native/native-rw.cc \
	bench/native/ck-bytelock.c bench/native/ck-bytelock.h
bench_native_native_rw_CPPFLAGS = $(AM_CPPFLAGS) $(NATIVE_CPPFLAGS)
bench_native_native_rw_CXXFLAGS = $(AM_CXXFLAGS) -std=gnu++17 $(NATIVE_CXXFLAGS)
bench_native_native_rw_LDADD = bench/libbench.la $(NATIVE_LIBS) -lm
endif
