# automake fragment, included from Makefile.am
# ---- tests/glibc/: glibc's own tst-rwlock* tests under every variant ----

# Fetches Debian's glibc source of the installed libc6 into a cache (or
# uses GLIBC_SRC), builds the tests against tests/glibc/shim, runs them
# natively and under each variant; exit 77 (SKIP) when the source cannot
# be had.
TESTS += tests/glibc/run-glibc-rwlock-tests
EXTRA_DIST += tests/glibc/run-glibc-rwlock-tests \
	tests/glibc/shim/shim.c \
	tests/glibc/shim/test-skeleton.c \
	tests/glibc/shim/include/atomic.h \
	tests/glibc/shim/include/support/check.h \
	tests/glibc/shim/include/support/shim.h \
	tests/glibc/shim/include/support/stress.h \
	tests/glibc/shim/include/support/test-driver.c \
	tests/glibc/shim/include/support/test-driver.h \
	tests/glibc/shim/include/support/timespec.h \
	tests/glibc/shim/include/support/xthread.h \
	tests/glibc/shim/include/support/xtime.h

clean-local: clean-glibc-tests
clean-glibc-tests:
	-rm -rf tests/glibc/work
.PHONY: clean-glibc-tests
