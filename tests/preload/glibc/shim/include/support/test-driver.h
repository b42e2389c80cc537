/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: see shim.h.  */
#include <support/shim.h>
