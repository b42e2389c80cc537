# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- the no-harm sweep: BRAVO against its underlying lock ----
# bench/drivers/noharm-sweep runs bench/noharm in interleaved A/B rounds
# (bravo-ba over ba, bravo-pthread over glibc) at every write fraction and
# writes results/noharm.raw.csv, results/noharm.csv and results/noharm.png.

dist_noinst_SCRIPTS += bench/drivers/noharm-sweep

# make noharm                                  the full grid, about 9 minutes
# make noharm NOHARM_ARGS='--quick'            a short sweep, under a minute
# make noharm NOHARM_ARGS='--outdir /tmp/nh --threads 2 --runs 11'   (a later option wins)
noharm: all
	'$(srcdir)/bench/drivers/noharm-sweep' --builddir '$(abs_top_builddir)' \
		--outdir '$(srcdir)/results' $(NOHARM_ARGS)
.PHONY: noharm

# The oversubscribed row (issue 34): 16 threads on one lock, 1% writes,
# every variant against glibc, in interleaved rounds, and glibc against
# itself, the null comparison: how far the method alone strays there
# (results/README.md, "Waiting").
noharm-oversubscribed: all
	'$(srcdir)/bench/drivers/noharm-sweep' --builddir '$(abs_top_builddir)' \
		--outdir '$(srcdir)/results/wait/oversubscribed' \
		--pairs glibc/glibc,ba/glibc,percpu/glibc,cohort-rw/glibc,bravo-ba/glibc,bravo-pthread/glibc \
		--threads 16 --writes 0.01 --nlocks 1 --ncs 0 $(NOHARM_ARGS)
.PHONY: noharm-oversubscribed
