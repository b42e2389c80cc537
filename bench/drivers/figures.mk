# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- figures: sweep driver, plots, `make figures` ----
# bench/drivers/bench-sweep runs one of the paper's figures as an
# interleaved sweep (raw and summary CSV), bench/drivers/bench-plot draws
# it with gnuplot, bench/drivers/make-figures does every figure into
# results/.

dist_noinst_SCRIPTS += bench/drivers/bench-sweep bench/drivers/bench-plot bench/drivers/make-figures \
	bench/drivers/table-sweep
EXTRA_DIST += bench/drivers/benchfig.py

# make figures            short run (1 s x 3 runs, threads up to 2x the CPUs), ~10 min on 2 CPUs
# make figures PAPER=1    the paper's settings (10 s x 7 runs, threads up to the CPUs)
# make figures RESUME=1   continue an interrupted run (keeps the runs already done)
# FIGURES=fig2,fig4f      only these figures; FIGURES_OUTDIR=DIR elsewhere than results/
# FIGURES_ARGS="--runs 1 --duration 0.2"   more make-figures options
figures: all
	@set -e; opts=; \
	case '$(PAPER)' in ''|0) ;; *) opts="$$opts --paper" ;; esac; \
	case '$(RESUME)' in ''|0) ;; *) opts="$$opts --resume" ;; esac; \
	test -z '$(FIGURES)' || opts="$$opts --figures $(FIGURES)"; \
	outdir='$(FIGURES_OUTDIR)'; test -n "$$outdir" || outdir='$(srcdir)/results'; \
	'$(srcdir)/bench/drivers/make-figures' --builddir '$(abs_top_builddir)' \
		--outdir "$$outdir" $$opts $(FIGURES_ARGS)
.PHONY: figures
