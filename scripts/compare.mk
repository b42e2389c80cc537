# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- A/B comparison: bravo-compare (bravo-run --compare) (tests: tests/tools/local.mk) ----

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
runner_modules = scripts/bravo_runner.py scripts/bravo_service.py scripts/bravo_stats.py scripts/bravo_cli.py \
	scripts/bravo_plot.py scripts/bravo_profile.py
dist_pkgdata_DATA = $(runner_modules)

dist_man_MANS += man/bravo-compare.1
EXTRA_DIST += scripts/bravo-compare.in
