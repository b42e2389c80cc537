/* SPDX-License-Identifier: BSD-2-Clause */
/* bravo-pthread: BRAVO over glibc's own rwlock, in place (src/variants/glue_bravo.h). */
#define LIBBRAVO_UNDER_PTHREAD 1
