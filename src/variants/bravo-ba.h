/* SPDX-License-Identifier: BSD-2-Clause */
/* bravo-ba: BRAVO over the BA lock, both inline in the handle (src/variants/glue_bravo.h). */
#define LIBBRAVO_UNDER_BA 1
