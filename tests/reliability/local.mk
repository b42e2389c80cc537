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
EXTRA_DIST += scripts/interruptible.sh

# make check-sanitizers [SANITIZERS='thread address,undefined']: the unit
# tests (and the preload runs) under each sanitizer, in fresh builds.
check-sanitizers:
	$(SHELL) $(srcdir)/scripts/check-sanitizers $(SANITIZERS)
.PHONY: check-sanitizers

# make fuzz [FUZZ_SECONDS=N] [FUZZ_CC=clang]: oprand's operation interpreter
# driven by libFuzzer bytes (one thread, ASan+UBSan), N seconds under each
# variant and under glibc.  A divergence aborts; libFuzzer then leaves the
# input in tests/reliability/fuzz-VARIANT-crash-* and make fails.
FUZZ_SECONDS = 30
FUZZ_CC = clang
tests/reliability/oprand-fuzz: $(srcdir)/tests/reliability/oprand.c
	$(AM_V_GEN)$(MKDIR_P) tests/reliability && \
	$(FUZZ_CC) -DOPRAND_FUZZER -D_GNU_SOURCE -std=gnu11 -g -O1 -Wall -Wextra -pthread \
		-fsanitize=fuzzer,address,undefined -o $@ $(srcdir)/tests/reliability/oprand.c
fuzz: tests/reliability/oprand-fuzz $(lib_LTLIBRARIES)
	@set -e; corpus=$$(mktemp -d); trap 'rm -rf "$$corpus"' EXIT; \
	for v in glibc $(LIBBRAVO_VARIANTS); do \
		if [ $$v = glibc ]; then pre=; else pre=$(abs_top_builddir)/src/.libs/libbravo-$$v.so; fi; \
		echo "fuzz: $$v, $(FUZZ_SECONDS) s"; mkdir -p "$$corpus/$$v"; \
		if LD_PRELOAD=$$pre ./tests/reliability/oprand-fuzz -max_total_time=$(FUZZ_SECONDS) \
			-timeout=10 -print_final_stats=1 -artifact_prefix=tests/reliability/fuzz-$$v- \
			"$$corpus/$$v" >"$$corpus/$$v.log" 2>&1; then \
			grep -E '^(oprand-fuzz:|stat::number_of_executed_units)' "$$corpus/$$v.log"; \
		else \
			grep -E -A12 '^(oprand: DIVERGENCE|==[0-9]+==ERROR)' "$$corpus/$$v.log" || tail -n 30 "$$corpus/$$v.log"; \
			exit 1; \
		fi; \
	done
.PHONY: fuzz
CLEANFILES += tests/reliability/oprand-fuzz
