#!/bin/sh
# run-under-preload.sh VARIANT PROGRAM [ARGS...]
#
# Runs an ordinary pthread test program under LD_PRELOAD of one libbravo
# variant, or (VARIANT glibc) without preload, against glibc's own rwlocks.
#
#   VARIANT   glibc, or a variant name: ba, bravo-ba, bravo-pthread, ...
#             (the library is ${BUILDDIR:-.}/src/.libs/libbravo-VARIANT.so)
#
# Sets for the program:
#   LD_PRELOAD          absolute path of the variant's library (unset for glibc)
#   EXPECT_RWLOCK_LIB   basename of the object that must define pthread_rwlock_*
#                       (libbravo-VARIANT.so, or libc.so.6 for glibc)
#   RWLOCK_UNDER_TEST   glibc or VARIANT; glibc makes the programs skip only
#                       the checks that libbravo alone promises
#
# The program runs under timeout (${RWLOCK_TEST_TIMEOUT:-300} s); the exit
# status is the program's (124 if it timed out).  Exit 2: usage error or the
# variant's library is missing.
set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 VARIANT PROGRAM [ARGS...]" >&2
	exit 2
fi
variant=$1
shift

case $variant in
glibc)
	unset LD_PRELOAD
	EXPECT_RWLOCK_LIB=libc.so.6
	;;
*/* | '')
	echo "$0: bad variant name '$variant'" >&2
	exit 2
	;;
*)
	libdir=${BUILDDIR:-.}/src/.libs
	lib=libbravo-$variant.so
	if [ ! -f "$libdir/$lib" ]; then
		echo "$0: $libdir/$lib not found (variant '$variant' not built?)" >&2
		exit 2
	fi
	abslibdir=$(cd "$libdir" && pwd -P) || exit 2
	LD_PRELOAD=$abslibdir/$lib
	EXPECT_RWLOCK_LIB=$lib
	export LD_PRELOAD
	;;
esac
RWLOCK_UNDER_TEST=$variant
export EXPECT_RWLOCK_LIB RWLOCK_UNDER_TEST

# -k: a program that ignores SIGTERM is killed 10 s later.
timeout -k 10 "${RWLOCK_TEST_TIMEOUT:-300}" "$@"
exit $?
