/* SPDX-License-Identifier: BSD-2-Clause */
/* percpu: one BA sub-lock per online CPU, in a heap block (src/variants/glue_percpu.h). */
#define LIBBRAVO_VARIANT_PERCPU 1
#define LIBBRAVO_HEAP_BLOCKS 1 /* src/variants/registry.c, src/variants/topology.c */
