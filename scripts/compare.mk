# automake fragment, included from Makefile.am
# ---- A/B comparison: bravo-compare (bravo-run --compare) (tests: tests/tools/local.mk) ----

# The driver, installed beside bravo-run (which finds it there).
bin_SCRIPTS += scripts/bravo-compare
CLEANFILES += scripts/bravo-compare
scripts/bravo-compare: scripts/bravo-compare.in Makefile
	$(AM_V_GEN)$(MKDIR_P) scripts && \
	sed -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		$(srcdir)/scripts/bravo-compare.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@

dist_man_MANS += man/bravo-compare.1
EXTRA_DIST += scripts/bravo-compare.in
