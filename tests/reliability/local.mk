# automake fragment, included from Makefile.am
# ---- tests/reliability/: randomized operation-sequence tester, sanitizers ----

# oprand: an ordinary pthread program, run under LD_PRELOAD of every variant
# (and without preload) by the check scripts below.
check_PROGRAMS += tests/reliability/oprand
tests_reliability_oprand_SOURCES = tests/reliability/oprand.c
tests_reliability_oprand_CFLAGS = $(AM_CFLAGS)

# A deliberately broken rwlock, preloaded in front of a variant, to show
# that oprand catches a broken lock (OPRAND_FAULT picks the fault).
check_LTLIBRARIES += tests/reliability/faulty.la
tests_reliability_faulty_la_SOURCES = tests/reliability/faulty.c
tests_reliability_faulty_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

reliability_tests = \
	tests/reliability/oprand-check \
	tests/reliability/oprand-mutant-check \
	tests/reliability/oprand-fault-check \
	tests/reliability/oprand-usage-check
TESTS += $(reliability_tests)
EXTRA_DIST += $(reliability_tests)
dist_noinst_SCRIPTS += scripts/check-sanitizers

# make check-sanitizers [SANITIZERS='thread address,undefined']: the unit
# tests (and the preload runs) under each sanitizer, in fresh builds.
check-sanitizers:
	$(SHELL) $(srcdir)/scripts/check-sanitizers $(SANITIZERS)
.PHONY: check-sanitizers
