/* SPDX-License-Identifier: BSD-2-Clause */
/* shared-counter.c - do the two CPUs share caches?  Two threads pinned to CPUs 0 and 1 increment one atomic counter; if that is no slower per increment than one thread alone, the line never bounces.  gcc -O2 -pthread shared-counter.c && ./a.out && ./a.out 2 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
static _Atomic long ctr; static _Atomic int go;
static void *w(void *a){ cpu_set_t s; CPU_ZERO(&s); CPU_SET((long)a,&s); sched_setaffinity(0,sizeof s,&s); while(!go); for(long i=0;i<20000000;i++) atomic_fetch_add(&ctr,1); return 0;}
int main(int argc,char**argv){ int n=argc>1?2:1; pthread_t t[2]; struct timespec a,b; for(long i=0;i<n;i++) pthread_create(&t[i],0,w,(void*)i); clock_gettime(CLOCK_MONOTONIC,&a); go=1; for(int i=0;i<n;i++) pthread_join(t[i],0); clock_gettime(CLOCK_MONOTONIC,&b); double s=(b.tv_sec-a.tv_sec)+(b.tv_nsec-a.tv_nsec)/1e9; printf("%d threads: %.1f ns per inc (total incs %ld)\n", n, s*1e9/(20000000.0*n), ctr); }
