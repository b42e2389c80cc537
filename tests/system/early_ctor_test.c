/*
 * early_ctor_test - run with LD_PRELOAD naming early_ctor_lib.so and
 * libbravo, in either order: the rwlock calls made by early_ctor_lib's
 * constructor, whichever constructor ran first, got libbravo's answers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	int *ran = dlsym(RTLD_DEFAULT, "early_ctor_ran");
	int *failures = dlsym(RTLD_DEFAULT, "early_ctor_failures");

	if (!ran || !failures) {
		fprintf(stderr, "early_ctor_test: early_ctor_lib.so is not preloaded\n");
		return 1;
	}
	if (!*ran || *failures) {
		fprintf(stderr, "early_ctor_test: constructor ran=%d, %d unexpected results\n",
			*ran, *failures);
		return 1;
	}
	puts("early_ctor_test: rwlock calls from another library's constructor were answered by libbravo");
	return 0;
}
