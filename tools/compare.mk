# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- A/B comparison: bravo-compare (bravo-run --compare) (tests: tests/tools/local.mk) ----

# The driver, installed beside bravo-run (which finds it there), and the
# modules it is a front end of, installed in $(pkgdatadir), where the
# driver looks for them (and beside itself, in a source or build tree).
bin_SCRIPTS += tools/bravo-compare
CLEANFILES += tools/bravo-compare
tools/bravo-compare: tools/bravo-compare.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && \
	sed -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		-e 's|@pkgdatadir[@]|$(pkgdatadir)|g' -e 's|@bindir[@]|$(bindir)|g' \
		-e 's|@abs_top_srcdir[@]|$(abs_top_srcdir)|g' \
		$(srcdir)/tools/bravo-compare.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
runner_modules = tools/bravo_runner.py tools/bravo_service.py tools/bravo_stats.py tools/bravo_cli.py \
	tools/bravo_plot.py tools/bravo_profile.py
dist_pkgdata_DATA = $(runner_modules)

dist_man_MANS += man/bravo-compare.1
EXTRA_DIST += tools/bravo-compare.in
