/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * early_ctor_test - run with LD_PRELOAD naming early_ctor_lib.so and
 * libbravo, in either order: the rwlock calls made by early_ctor_lib's
 * constructor, whichever constructor ran first, got libbravo's answers;
 * then the locks used there, re-initialized and reused in place after
 * every constructor ran, work (early_ctor_check.sh runs it under
 * valgrind, with settings, to see no block built early is overrun).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>

#include "../../lib/test_util.h"

int main(void)
{
	int *ran = dlsym(RTLD_DEFAULT, "early_ctor_ran");
	int *failures = dlsym(RTLD_DEFAULT, "early_ctor_failures");
	int (*after)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "early_ctor_after");
	int late;

	rwlock_lib_require("early_ctor_test"); /* which library answered (EXPECT_RWLOCK_LIB) */

	if (!ran || !failures || !after) {
		fprintf(stderr, "early_ctor_test: early_ctor_lib.so is not preloaded\n");
		return 1;
	}
	if (!*ran || *failures) {
		fprintf(stderr, "early_ctor_test: constructor ran=%d, %d unexpected results\n",
			*ran, *failures);
		return 1;
	}
	late = after();
	if (late) {
		fprintf(stderr, "early_ctor_test: %d unexpected results re-initializing and reusing the early locks\n",
			late);
		return 1;
	}
	puts("early_ctor_test: rwlock calls from another library's constructor were answered by libbravo, "
	     "and its locks, re-initialized and reused later, work");
	return 0;
}
