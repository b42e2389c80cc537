# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am: SPIN protocol models.
#
# make model-check   verify models/bravo.pml and models/ba.pml (the correct
#                    configurations must verify, the mutants must be caught);
#                    `make check` runs the same script through TESTS.
models_files = models/bravo.pml models/ba.pml models/README.md

TESTS += models/run-models
EXTRA_DIST += models/run-models $(models_files)

.PHONY: model-check
model-check:
	$(SHELL) $(srcdir)/models/run-models
