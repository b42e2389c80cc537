/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bravo-ba-private: bravo-ba with a visible readers table of each lock's
 * own (VR_PER_LOCK), the "ideal" BRAVO-BA of the paper's figure 1.  For the
 * benchmarks (configure.ac's lb_bench_variants): never installed.
 */
#define LIBBRAVO_UNDER_BA 1
#define LIBBRAVO_BRAVO_PRIVATE_TABLE 1
