/* SPDX-License-Identifier: BSD-2-Clause */
/* mixed.c - one read-mostly lock beside 4096 write-heavy ones, in the same threads.
 * usage: mixed THREADS SECONDS HOT_SHARE HOT_WRITES COLD_WRITES
 * Each operation picks the hot lock with probability HOT_SHARE (else one of
 * 4096 cold locks at random) and writes with that lock's write probability
 * (else reads); 10 xorshift steps inside.  Prints hot and cold ops/s. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#define NCOLD 4096
static pthread_rwlock_t hot = PTHREAD_RWLOCK_INITIALIZER, cold[NCOLD];
static uint64_t guard[NCOLD + 1];
static atomic_bool stop;
static double hot_share, hot_w, cold_w;
struct res { uint64_t hot, cold; };
static uint64_t xs(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }
static void *worker(void *arg)
{
	struct res *r = arg;
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15u | 1;
	uint32_t th = (uint32_t)(hot_share * 4294967295.0), hw = (uint32_t)(hot_w * 4294967295.0),
		 cw = (uint32_t)(cold_w * 4294967295.0);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int k = 0; k < 64; k++) {
			uint64_t x = xs(&s);
			int is_hot = (uint32_t)x < th;
			uint32_t i = (uint32_t)(x >> 32) % NCOLD;
			pthread_rwlock_t *l = is_hot ? &hot : &cold[i];
			uint64_t *g = is_hot ? &guard[NCOLD] : &guard[i];
			int w = (uint32_t)xs(&s) < (is_hot ? hw : cw);
			if (w) pthread_rwlock_wrlock(l); else pthread_rwlock_rdlock(l);
			uint64_t y = *g;
			for (int j = 0; j < 10; j++) y = y * 6364136223846793005u + 1;
			if (w) *g = y;
			pthread_rwlock_unlock(l);
			if (is_hot) r->hot++; else r->cold++;
		}
	}
	return NULL;
}
int main(int argc, char **argv)
{
	if (argc != 6) { fprintf(stderr, "usage: mixed THREADS SECONDS HOT_SHARE HOT_WRITES COLD_WRITES\n"); return 2; }
	int n = atoi(argv[1]); double secs = atof(argv[2]);
	hot_share = atof(argv[3]); hot_w = atof(argv[4]); cold_w = atof(argv[5]);
	for (int i = 0; i < NCOLD; i++) pthread_rwlock_init(&cold[i], NULL);
	pthread_t t[64]; struct res r[64] = {{0}};
	for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, &r[i]);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	uint64_t h = 0, c = 0;
	for (int i = 0; i < n; i++) { pthread_join(t[i], NULL); h += r[i].hot; c += r[i].cold; }
	printf("hot=%.0f cold=%.0f\n", h / secs, c / secs);
	return 0;
}
