/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mt19937_test.c - bench/mt19937 is the generator of C++'s std::mt19937:
 * seeded with 5489 (its default seed), the first output is 3499211612 and
 * the 10000th is 4123659995 (the value the C++ standard requires,
 * [rand.predef]).  Exit 0 if so, 1 otherwise.
 */
#include <inttypes.h>
#include <stdio.h>

#include "../../bench/mt19937.h"

int main(void)
{
	struct mt19937 mt;
	uint32_t first, x;

	mt19937_seed(&mt, 5489);
	first = x = mt19937_next(&mt);
	for (int i = 2; i <= 10000; i++)
		x = mt19937_next(&mt);
	if (first != UINT32_C(3499211612) || x != UINT32_C(4123659995)) {
		printf("FAIL: mt19937 from seed 5489: first %" PRIu32 " (want 3499211612), "
		       "10000th %" PRIu32 " (want 4123659995)\n", first, x);
		return 1;
	}
	printf("PASS: mt19937 from seed 5489 matches std::mt19937\n");
	return 0;
}
