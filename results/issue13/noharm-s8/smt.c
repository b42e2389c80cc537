#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *work(void *p){ uint64_t a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8; for(long i=0;i<400000000;i++){a+=i;b^=i;c+=a;d^=b;e+=i>>1;f^=e;g+=c;h^=d; __asm__("":"+r"(a),"+r"(b),"+r"(c),"+r"(d),"+r"(e),"+r"(f),"+r"(g),"+r"(h));} *(uint64_t*)p=a^b^c^d^e^f^g^h; return 0;}
int main(void){ uint64_t r[2]; pthread_t t[2]; double s=now(); work(&r[0]); double one=now()-s;
 s=now(); for(int i=0;i<2;i++) pthread_create(&t[i],0,work,&r[i]); for(int i=0;i<2;i++) pthread_join(t[i],0); double two=now()-s;
 printf("1 thread %.3fs, 2 threads %.3fs (ratio %.2f)\n",one,two,two/one); }
