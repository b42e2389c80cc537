# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/preload/glibc/: glibc's own tst-rwlock* tests under every variant ----

# Fetches Debian's glibc source of the installed libc6 into a cache (or
# uses GLIBC_SRC), builds the tests against tests/preload/glibc/shim, runs them
# natively and under each variant; exit 77 (SKIP) when the source cannot
# be had.
TESTS += tests/preload/glibc/run-glibc-rwlock-tests
EXTRA_DIST += tests/preload/glibc/run-glibc-rwlock-tests \
	tests/preload/glibc/shim/shim.c \
	tests/preload/glibc/shim/test-skeleton.c \
	tests/preload/glibc/shim/include/atomic.h \
	tests/preload/glibc/shim/include/support/check.h \
	tests/preload/glibc/shim/include/support/shim.h \
	tests/preload/glibc/shim/include/support/stress.h \
	tests/preload/glibc/shim/include/support/test-driver.c \
	tests/preload/glibc/shim/include/support/test-driver.h \
	tests/preload/glibc/shim/include/support/timespec.h \
	tests/preload/glibc/shim/include/support/xthread.h \
	tests/preload/glibc/shim/include/support/xtime.h

clean-local: clean-glibc-tests
clean-glibc-tests:
	-rm -rf tests/preload/glibc/work
.PHONY: clean-glibc-tests
