# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- RocksDB harnesses (bench/drivers/rocksdb-*; tests: tests/tools/rocksdb): front
# ends over tools/bravo_runner.py, sharing bench/drivers/rocksdb_harness.py ----
# The harnesses run unmodified RocksDB binaries (Debian's db_bench, and
# hash_table_bench built from Debian's rocksdb source) under every variant.
dist_noinst_SCRIPTS += bench/drivers/rocksdb-db-bench bench/drivers/rocksdb-hash-table-bench
EXTRA_DIST += bench/drivers/rocksdb_harness.py

# Run the harnesses' figures on this machine (long: see doc/benchmarking.md, "RocksDB harnesses").
rocksdb-figures:
	$(srcdir)/bench/drivers/rocksdb-db-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig5
	$(srcdir)/bench/drivers/rocksdb-hash-table-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig6
.PHONY: rocksdb-figures
