# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/stress/: torture, randomized operation sequences, contention ----
#
# Torture and misuse programs: ordinary pthread programs (they know
# nothing of libbravo), run under
# LD_PRELOAD of every variant and under plain glibc by one driver,
# tests/stress/torture-check: in `make check` with short operation counts,
# and by `make torture` with TORTURE_SCALE=10.

torture_programs = \
	tests/stress/oversubscribed \
	tests/stress/cancel_exit \
	tests/stress/signal_storm \
	tests/stress/fork_locks \
	tests/stress/exec_preload \
	tests/stress/misuse
check_PROGRAMS += $(torture_programs)

tests_stress_oversubscribed_SOURCES = tests/stress/oversubscribed.c tests/stress/torture.h tests/lib/test_util.h
tests_stress_cancel_exit_SOURCES = tests/stress/cancel_exit.c tests/stress/torture.h tests/lib/test_util.h
tests_stress_signal_storm_SOURCES = tests/stress/signal_storm.c tests/stress/torture.h tests/lib/test_util.h
tests_stress_fork_locks_SOURCES = tests/stress/fork_locks.c tests/stress/torture.h tests/lib/test_util.h
tests_stress_exec_preload_SOURCES = tests/stress/exec_preload.c tests/stress/torture.h tests/lib/test_util.h
tests_stress_misuse_SOURCES = tests/stress/misuse.c tests/stress/torture.h tests/lib/test_util.h

# glibc 2.36's writer-preferring wedge (doc/glibc-wedge.md): built with the
# checks, run by hand only (it hangs glibc by design).
check_PROGRAMS += tests/stress/prefer_writer_churn
tests_stress_prefer_writer_churn_SOURCES = tests/stress/prefer_writer_churn.c

TESTS += tests/stress/torture-check
EXTRA_DIST += tests/stress/torture-check
CLEANFILES += tests/stress/*.out tests/stress/*.err tests/stress/*.csv

# The long run: ten times the operations, every program x variant.
TORTURE_SCALE_LONG = 10
torture: $(torture_programs) $(lib_LTLIBRARIES)
	abs_top_builddir='$(abs_top_builddir)' TORTURE_SCALE=$(TORTURE_SCALE_LONG) \
		$(SHELL) $(srcdir)/tests/stress/torture-check
.PHONY: torture

# ---- randomized operation sequences (oprand), sanitizers, fuzzing ----

# oprand: an ordinary pthread program, run under LD_PRELOAD of every variant
# (and without preload) by the check scripts below.
check_PROGRAMS += tests/stress/oprand
tests_stress_oprand_SOURCES = tests/stress/oprand.c
tests_stress_oprand_CFLAGS = $(AM_CFLAGS)

# A deliberately broken rwlock, preloaded in front of a variant, to show
# that oprand catches a broken lock (OPRAND_FAULT picks the fault).
check_LTLIBRARIES += tests/stress/faulty.la
tests_stress_faulty_la_SOURCES = tests/stress/faulty.c
tests_stress_faulty_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

reliability_tests = \
	tests/stress/oprand-check \
	tests/stress/oprand-mutant-check \
	tests/stress/oprand-fault-check \
	tests/stress/oprand-usage-check
TESTS += $(reliability_tests)
EXTRA_DIST += $(reliability_tests)
dist_noinst_SCRIPTS += tests/check-sanitizers
EXTRA_DIST += tests/lib/interruptible.sh

# make check-sanitizers [SANITIZERS='thread address,undefined']: the unit
# tests (and the preload runs) under each sanitizer, in fresh builds.
check-sanitizers:
	$(SHELL) $(srcdir)/tests/check-sanitizers $(SANITIZERS)
.PHONY: check-sanitizers

# make fuzz [FUZZ_SECONDS=N] [FUZZ_CC=clang]: oprand's operation interpreter
# driven by libFuzzer bytes (one thread, ASan+UBSan), N seconds under each
# variant and under glibc.  A divergence aborts; libFuzzer then leaves the
# input in tests/stress/fuzz-VARIANT-crash-* and make fails.
FUZZ_SECONDS = 30
FUZZ_CC = clang
tests/stress/oprand-fuzz: $(srcdir)/tests/stress/oprand.c
	$(AM_V_GEN)$(MKDIR_P) tests/stress && \
	$(FUZZ_CC) -DOPRAND_FUZZER -D_GNU_SOURCE -std=gnu11 -g -O1 -Wall -Wextra -pthread \
		-fsanitize=fuzzer,address,undefined -o $@ $(srcdir)/tests/stress/oprand.c
fuzz: tests/stress/oprand-fuzz $(lib_LTLIBRARIES)
	@set -e; corpus=$$(mktemp -d); trap 'rm -rf "$$corpus"' EXIT; \
	for v in glibc $(LIBBRAVO_VARIANTS); do \
		if [ $$v = glibc ]; then pre=; else pre=$(abs_top_builddir)/src/.libs/libbravo-$$v.so; fi; \
		echo "fuzz: $$v, $(FUZZ_SECONDS) s"; mkdir -p "$$corpus/$$v"; \
		if LD_PRELOAD=$$pre ./tests/stress/oprand-fuzz -max_total_time=$(FUZZ_SECONDS) \
			-timeout=10 -print_final_stats=1 -artifact_prefix=tests/stress/fuzz-$$v- \
			"$$corpus/$$v" >"$$corpus/$$v.log" 2>&1; then \
			grep -E '^(oprand-fuzz:|stat::number_of_executed_units)' "$$corpus/$$v.log"; \
		else \
			grep -E -A12 '^(oprand: DIVERGENCE|==[0-9]+==ERROR)' "$$corpus/$$v.log" || tail -n 30 "$$corpus/$$v.log"; \
			exit 1; \
		fi; \
	done
.PHONY: fuzz
CLEANFILES += tests/stress/oprand-fuzz

# Contended no-harm runs under every variant finish (a lost wake-up is a
# hang, and so a FAIL).
TESTS += tests/stress/contention-check
EXTRA_DIST += tests/stress/contention-check
