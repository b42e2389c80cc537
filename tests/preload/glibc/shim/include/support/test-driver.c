/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: included at the end of a new-style test, which has
   defined do_test (and perhaps TIMEOUT).  */
#include <support/shim.h>
#ifndef TIMEOUT
# define TIMEOUT DEFAULT_TIMEOUT
#endif
int
main (int argc, char **argv)
{
  return shim_test_main (argc, argv, do_test, TIMEOUT);
}
