# automake fragment, included from Makefile.am
# ---- A/B comparison: bravo-compare (bravo-run --compare) and its tests ----

# The driver, installed beside bravo-run (which finds it there), and the
# modules it is a front end of, installed in $(pkgdatadir), where the
# driver looks for them (and beside itself, in a source or build tree).
bin_SCRIPTS += scripts/bravo-compare
CLEANFILES += scripts/bravo-compare
scripts/bravo-compare: scripts/bravo-compare.in Makefile
	$(AM_V_GEN)$(MKDIR_P) scripts && \
	sed -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		-e 's|@pkgdatadir[@]|$(pkgdatadir)|g' -e 's|@bindir[@]|$(bindir)|g' \
		-e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' \
		$(srcdir)/scripts/bravo-compare.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
runner_modules = scripts/bravo_runner.py scripts/bravo_stats.py scripts/bravo_cli.py \
	scripts/bravo_plot.py
dist_pkgdata_DATA = $(runner_modules)

dist_man_MANS += man/bravo-compare.1

# A program with a known, deterministic effect of the preload (it asks the
# dynamic linker whose pthread_rwlock_rdlock it got), and a static wrapper
# that drops LD_PRELOAD before exec (a run whose preload never takes effect).
compare_probes = tests/compare/ab_probe tests/compare/static_exec
check_PROGRAMS += $(compare_probes)
tests_compare_ab_probe_SOURCES = tests/compare/ab_probe.c
tests_compare_ab_probe_LDADD = -ldl
tests_compare_static_exec_SOURCES = tests/compare/static_exec.c
tests_compare_static_exec_LDFLAGS = -all-static

TESTS += tests/compare-check tests/compare-stats-check tests/compare-runner-check
EXTRA_DIST += scripts/bravo-compare.in tests/compare-check tests/compare/compare_test.sh \
	tests/compare-stats-check tests/compare/stats_test.py \
	tests/compare-runner-check tests/compare/runner_test.py
