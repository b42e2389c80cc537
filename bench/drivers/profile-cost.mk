# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- the profile's cost (issue 15): bench/drivers/profile-cost ----
# On: db_bench readwhilewriting with the profile off and on, per lock.
# Off: pairloop and noharm, this build's variants against a build without
# the profile (PROFILE_COST_BASELINE, by default the first parent of the
# profile's merge, built in a temporary git worktree), interleaved.

dist_noinst_SCRIPTS += bench/drivers/profile-cost

# make profile-cost                                      both parts, 7 rounds, about 12 minutes on 2 CPUs
# make profile-cost PROFILE_COST_BASELINE_LIBDIR=DIR     an existing build's src/.libs as the baseline
# make profile-cost PROFILE_COST_ARGS='--runs 3 --locks glibc,bravo-ba'   (a later option wins)
# make profile-cost PROFILE_COST_OUT=results/profile-cost
PROFILE_COST_BASELINE = 664b8f1^1
PROFILE_COST_OUT = profile-cost
profile-cost: all
	@set -e; base='$(PROFILE_COST_BASELINE_LIBDIR)'; wt=; \
	cleanup() { if test -n "$$wt"; then \
		git -C '$(srcdir)' worktree remove --force "$$wt/tree" >/dev/null 2>&1 || true; \
		rm -rf "$$wt"; fi; }; \
	trap cleanup EXIT; trap 'exit 1' HUP INT TERM; \
	if test -z "$$base"; then \
		if ! git -C '$(srcdir)' rev-parse --verify -q '$(PROFILE_COST_BASELINE)^{commit}' >/dev/null 2>&1; then \
			echo "make profile-cost: '$(srcdir)' is not a git checkout holding $(PROFILE_COST_BASELINE) (the tree before the profile): give PROFILE_COST_BASELINE_LIBDIR=DIR, the src/.libs of a build of it" >&2; \
			exit 1; \
		fi; \
		wt=$$(mktemp -d "$${TMPDIR:-/tmp}/profile-cost-baseline.XXXXXX"); \
		echo "make profile-cost: building $(PROFILE_COST_BASELINE) ($$(git -C '$(srcdir)' rev-parse --short '$(PROFILE_COST_BASELINE)')) in $$wt/tree"; \
		git -C '$(srcdir)' worktree add --detach "$$wt/tree" '$(PROFILE_COST_BASELINE)' >/dev/null; \
		(cd "$$wt/tree" && autoreconf -fi >"$$wt/build.log" 2>&1 && ./configure >>"$$wt/build.log" 2>&1 && \
			$(MAKE) >>"$$wt/build.log" 2>&1) || { tail -20 "$$wt/build.log" >&2; \
			echo "make profile-cost: the baseline's build failed (above)" >&2; exit 1; }; \
		base=$$wt/tree/src/.libs; \
	fi; \
	'$(srcdir)/bench/drivers/profile-cost' --on --off --builddir '$(abs_top_builddir)' \
		--baseline-libdir "$$base" --out '$(PROFILE_COST_OUT)' $(PROFILE_COST_ARGS)
.PHONY: profile-cost
