/* SPDX-License-Identifier: BSD-2-Clause */
/* ba: the Brandenburg-Anderson phase-fair lock, inline in the handle (src/variants/glue_ba.h). */
#define LIBBRAVO_VARIANT_BA 1
