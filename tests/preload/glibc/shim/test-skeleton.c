/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: included ("../test-skeleton.c") at the end of an
   old-style test, which has defined TEST_FUNCTION (and perhaps TIMEOUT).  */
#include <support/shim.h>
#include <support/check.h>
#include <support/xthread.h>
#ifndef TIMEOUT
# define TIMEOUT DEFAULT_TIMEOUT
#endif
static int
shim_test_function (void)
{
  return TEST_FUNCTION;
}
int
main (int argc, char **argv)
{
  return shim_test_main (argc, argv, shim_test_function, TIMEOUT);
}
