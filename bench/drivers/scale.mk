# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- the scale sweep (issue 34, item 4): bench/drivers/scale-sweep ----
# Read scaling to 2x the CPUs, the oversubscribed rows (4x, 8x), the
# no-harm grid at 2 and all CPUs, figures 4a-4f, within a time budget,
# into results/scale/LABEL/ (CSV, PNG, summary.md, machine.txt).  Meant for
# a machine of 16 CPUs or more; no test needs its output.

dist_noinst_SCRIPTS += bench/drivers/scale-sweep

# make scale-sweep                                   8 minutes, into results/scale/HOSTNAME/
# make scale-sweep SCALE_ARGS='--label big16 --budget 900'
# make scale-sweep SCALE_ARGS=--dry-run              the plan only
scale-sweep: all
	'$(srcdir)/bench/drivers/scale-sweep' --builddir '$(abs_top_builddir)' $(SCALE_ARGS)
.PHONY: scale-sweep
