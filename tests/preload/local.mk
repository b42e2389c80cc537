# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/preload/: ordinary programs under every variant and plain glibc ----
# The programs know nothing of libbravo: they call pthread_rwlock_* and
# check what glibc 2.36 promises.  One driver, tests/preload/run, runs them
# all under LD_PRELOAD of one variant (NAME.vt) or without preload
# (glibc.vt, which checks the suite itself against glibc).  Each program
# proves which library answered (EXPECT_RWLOCK_LIB).

# The Check programs the driver runs plainly, each as one check (and under
# jemalloc, and on Cohort-RW's two artificial nodes).  A missing one is a
# failure: the driver gets this list, not a glob.
preload_programs = \
	tests/preload/posix_rwlock_test \
	tests/preload/shared_mutex_test \
	tests/preload/lock_bytes_test
# One program in several files, one or a few sections each (main.c
# assembles the suite, harness.c has the helper threads).
tests_preload_posix_rwlock_test_SOURCES = tests/preload/posix_rwlock/main.c \
	tests/preload/posix_rwlock/posix_rwlock.h tests/preload/posix_rwlock/harness.c \
	tests/preload/posix_rwlock/edeadlk_ebusy.c tests/preload/posix_rwlock/reader_calls.c \
	tests/preload/posix_rwlock/unlock_unheld.c \
	tests/preload/posix_rwlock/timed.c tests/preload/posix_rwlock/exclusion.c \
	tests/preload/posix_rwlock/lifecycle.c tests/preload/posix_rwlock/pshared.c \
	tests/preload/posix_rwlock/scale.c tests/preload/posix_rwlock/churn.c \
	tests/preload/posix_rwlock/leak.c tests/preload/posix_rwlock/symbols.c \
	tests/lib/test_util.h tests/lib/check_run.h
tests_preload_posix_rwlock_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_preload_posix_rwlock_test_LDADD = $(CHECK_LIBS)
tests_preload_lock_bytes_test_SOURCES = tests/preload/lock_bytes_test.c \
	tests/lib/test_util.h tests/lib/check_run.h
tests_preload_lock_bytes_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_preload_lock_bytes_test_LDADD = $(CHECK_LIBS)
tests_preload_shared_mutex_test_SOURCES = tests/preload/shared_mutex_test.cc tests/lib/check_run.h
tests_preload_shared_mutex_test_CXXFLAGS = $(AM_CXXFLAGS) -std=gnu++17 $(CHECK_CFLAGS)
tests_preload_shared_mutex_test_LDADD = $(CHECK_LIBS)

# CPU placement: migration, exclusion on every CPU, cohort hand-off bound
# (run by tests/preload/placement-check.sh).
tests_preload_placement_test_SOURCES = tests/preload/placement_test.c \
	tests/lib/test_util.h tests/lib/check_run.h
tests_preload_placement_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_preload_placement_test_LDADD = $(CHECK_LIBS)

# glibc's behaviour where a program can tell, natively and under every
# variant (the driver's check "dropin": tests/preload/dropin-compare.sh).
tests_preload_dropin_SOURCES = tests/preload/dropin_test.c tests/lib/test_util.h

# The process around the lock: symbol versions, leaks, early constructors,
# statistics and settings, stderr, privileged programs.
preload_system_programs = tests/preload/system/oldsym_test tests/preload/system/leak_test \
	tests/preload/system/early_ctor_test tests/preload/system/stats_test \
	tests/preload/system/broken_stderr_run tests/preload/system/stderr_test
tests_preload_system_oldsym_test_SOURCES = tests/preload/system/oldsym_test.c tests/lib/test_util.h
tests_preload_system_leak_test_SOURCES = tests/preload/system/leak_test.c tests/lib/test_util.h
tests_preload_system_early_ctor_test_SOURCES = tests/preload/system/early_ctor_test.c tests/lib/test_util.h
tests_preload_system_stats_test_SOURCES = tests/preload/system/stats_test.c tests/lib/test_util.h
tests_preload_system_broken_stderr_run_SOURCES = tests/preload/system/broken_stderr_run.c
tests_preload_system_stderr_test_SOURCES = tests/preload/system/stderr_test.c tests/lib/test_util.h
# A library preloaded beside libbravo whose constructor takes rwlocks.
check_LTLIBRARIES = tests/preload/system/early_ctor_lib.la
tests_preload_system_early_ctor_lib_la_SOURCES = tests/preload/system/early_ctor_lib.c tests/lib/test_util.h
tests_preload_system_early_ctor_lib_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

# The per-lock profile (tests/preload/profile/profile_check.py): known
# locks made at known call sites, with debug information for their file
# and line.
tests_preload_profile_profile_test_SOURCES = tests/preload/profile/profile_test.c tests/lib/test_util.h
tests_preload_profile_profile_test_CFLAGS = $(AM_CFLAGS) -g

# Privileged programs (tests/preload/system/secure_check.sh): one program
# per variant (variants.am: tests/preload/system/secure_test-NAME) linked
# directly against it (DT_NEEDED, absolute run path), as ld.so ignores
# LD_PRELOAD with a slash in a set-user-ID process.
secure_ldflags = -Wl,-rpath,$(abs_top_builddir)/src/.libs

check_PROGRAMS += $(preload_programs) tests/preload/placement_test tests/preload/dropin \
	$(preload_system_programs) $(secure_tests) tests/preload/profile/profile_test

# One run of the driver per variant (variants.am adds NAME.vt for each),
# and one without preload that checks the suite itself against glibc.  A
# .vt is only a name: the driver takes the variant from it.
preload_tests += tests/preload/glibc.vt
$(preload_tests):
	@:
TESTS += $(preload_tests)
TEST_EXTENSIONS = .vt .long
VT_LOG_COMPILER = timeout 900 $(SHELL) $(srcdir)/tests/preload/run
AM_TESTS_ENVIRONMENT += PRELOAD_PROGRAMS='$(preload_programs)'; export PRELOAD_PROGRAMS;
CLEANFILES += tests/preload/*.out
clean-local: clean-dropin
clean-dropin:
	rm -rf tests/preload/dropin-work
.PHONY: clean-dropin
EXTRA_DIST += tests/preload/run tests/preload/dropin-compare.sh tests/preload/placement-check.sh \
	tests/preload/system/db_bench_check.sh tests/preload/system/early_ctor_check.sh \
	tests/preload/system/leak_check.sh \
	tests/preload/system/stats_check.sh tests/preload/system/report_check.sh \
	tests/preload/system/secure_check.sh tests/preload/profile/profile_check.py
