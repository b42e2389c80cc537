# automake fragment for tests/torture (torture and misuse programs), included
# at the end of Makefile.am.
#
# Ordinary pthread programs (they know nothing of libbravo), run under
# LD_PRELOAD of every variant and under plain glibc by one driver,
# tests/torture/torture-check: in `make check` with short operation counts,
# and by `make torture` with TORTURE_SCALE=10.

torture_programs = \
	tests/torture/oversubscribed \
	tests/torture/cancel_exit \
	tests/torture/signal_storm \
	tests/torture/fork_locks \
	tests/torture/exec_preload \
	tests/torture/misuse
check_PROGRAMS += $(torture_programs)

tests_torture_oversubscribed_SOURCES = tests/torture/oversubscribed.c tests/torture/torture.h tests/common/test_util.h
tests_torture_cancel_exit_SOURCES = tests/torture/cancel_exit.c tests/torture/torture.h tests/common/test_util.h
tests_torture_signal_storm_SOURCES = tests/torture/signal_storm.c tests/torture/torture.h tests/common/test_util.h
tests_torture_fork_locks_SOURCES = tests/torture/fork_locks.c tests/torture/torture.h tests/common/test_util.h
tests_torture_exec_preload_SOURCES = tests/torture/exec_preload.c tests/torture/torture.h tests/common/test_util.h
tests_torture_misuse_SOURCES = tests/torture/misuse.c tests/torture/torture.h tests/common/test_util.h

TESTS += tests/torture/torture-check
EXTRA_DIST += tests/torture/torture-check
CLEANFILES += tests/torture/*.out tests/torture/*.err

# The long run: ten times the operations, every program x variant.
TORTURE_SCALE_LONG = 10
torture: $(torture_programs) $(lib_LTLIBRARIES)
	abs_top_builddir='$(abs_top_builddir)' TORTURE_SCALE=$(TORTURE_SCALE_LONG) \
		$(SHELL) $(srcdir)/tests/torture/torture-check
.PHONY: torture
