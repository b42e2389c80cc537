/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mt19937.c - seeding and state regeneration of the 32-bit Mersenne Twister
 * (see mt19937.h).
 */
#include "mt19937.h"

#define MT19937_M 397
#define MATRIX_A UINT32_C(0x9908b0df)
#define UPPER_MASK UINT32_C(0x80000000)
#define LOWER_MASK UINT32_C(0x7fffffff)

void mt19937_seed(struct mt19937 *mt, uint32_t seed)
{
	mt->state[0] = seed;
	for (unsigned i = 1; i < MT19937_N; i++) {
		uint32_t prev = mt->state[i - 1];

		mt->state[i] = UINT32_C(1812433253) * (prev ^ (prev >> 30)) + i;
	}
	mt->index = MT19937_N;
}

/* Word i's new value mixes the top bit of i, the low bits of i+1, and i+M. */
static inline uint32_t twist_one(uint32_t cur, uint32_t next, uint32_t far)
{
	uint32_t y = (cur & UPPER_MASK) | (next & LOWER_MASK);

	return far ^ (y >> 1) ^ ((y & 1u) ? MATRIX_A : 0u);
}

void mt19937_twist(struct mt19937 *mt)
{
	uint32_t *s = mt->state;

	for (unsigned i = 0; i < MT19937_N; i++)
		s[i] = twist_one(s[i], s[(i + 1) % MT19937_N], s[(i + MT19937_M) % MT19937_N]);
	mt->index = 0;
}
