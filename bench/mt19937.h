/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mt19937.h - the 32-bit Mersenne Twister (Matsumoto & Nishimura, 1998),
 * the generator behind C++'s std::mt19937: same parameters, same
 * initialization from a 32-bit seed, so seed 5489 gives 3499211612 as the
 * first output and 4123659995 as the 10000th, as the C++ standard requires.
 *
 * RWBench (paper section 5.4) advances one thread-local generator as the
 * work inside and outside the critical section.
 */
#ifndef BENCH_MT19937_H
#define BENCH_MT19937_H

#include <stdint.h>

#define MT19937_N 624

struct mt19937 {
	uint32_t state[MT19937_N];
	unsigned index; /* next word of state to temper; N: regenerate first */
};

void mt19937_seed(struct mt19937 *mt, uint32_t seed);

/* Regenerate the whole state (the "twist"); out of line, once per N outputs. */
void mt19937_twist(struct mt19937 *mt);

static inline uint32_t mt19937_next(struct mt19937 *mt)
{
	uint32_t y;

	if (mt->index >= MT19937_N)
		mt19937_twist(mt);
	y = mt->state[mt->index++];
	y ^= y >> 11;
	y ^= (y << 7) & UINT32_C(0x9d2c5680);
	y ^= (y << 15) & UINT32_C(0xefc60000);
	y ^= y >> 18;
	return y;
}

#endif
