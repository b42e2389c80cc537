# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- tests/tools/service: bench/service's key-value server and its load
# generator, under glibc and under every variant; bravo-run --server on
# them (kv-check about 20 s, compare-service-check about 60 s, on 2 CPUs
# at a load average of 5 to 9) ----
service_tests = tests/tools/service/kv-check tests/tools/service/compare-service-check
TESTS += $(service_tests)
EXTRA_DIST += $(service_tests)
