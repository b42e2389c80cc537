# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/tools/service: bench/service's key-value server and its load
# generator, under glibc and under every variant (about 15 s) ----
service_tests = tests/tools/service/kv-check tests/tools/service/compare-service-check
TESTS += $(service_tests)
EXTRA_DIST += $(service_tests)
