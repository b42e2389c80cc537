# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/preload/posixtest/: the Open POSIX Test Suite's rwlock tests under every variant ----

# Fetches Debian's posixtestsuite source into a cache (or uses
# POSIXTEST_SRC), builds its pthread_rwlock* conformance tests, runs them
# natively and under each variant, default and strict; exit 77 (SKIP) when
# the source cannot be had.
TESTS += tests/preload/posixtest/run-posix-rwlock-tests
EXTRA_DIST += tests/preload/posixtest/run-posix-rwlock-tests

clean-local: clean-posixtest
clean-posixtest:
	-rm -rf tests/preload/posixtest/work
.PHONY: clean-posixtest
