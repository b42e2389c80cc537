#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>
int main(void){ struct timespec a,b; uint64_t s=0; clock_gettime(CLOCK_MONOTONIC,&a);
for(int i=0;i<50000000;i++) s+=__rdtsc(); clock_gettime(CLOCK_MONOTONIC,&b);
printf("rdtsc %.2f ns (%lu)\n",((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/5e7,(unsigned long)(s&1)); }
