/* SPDX-License-Identifier: BSD-2-Clause */
/* cohort-rw: C-RW-WP, a reader indicator per NUMA node, in a heap block (src/variants/glue_cohort.h). */
#define LIBBRAVO_VARIANT_COHORT 1
#define LIBBRAVO_HEAP_BLOCKS 1 /* src/variants/registry.c, src/variants/topology.c */
#define LIBBRAVO_NUMA_NODES 1  /* src/variants/topology.c asks libnuma, where configure found it */
