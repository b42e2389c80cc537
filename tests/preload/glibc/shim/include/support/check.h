/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: the check macros glibc's rwlock tests use.  */
#ifndef LIBBRAVO_GLIBC_SHIM_CHECK_H
#define LIBBRAVO_GLIBC_SHIM_CHECK_H
#include <support/shim.h>

#define FAIL(...) shim_fail (0, __FILE__, __LINE__, __VA_ARGS__)
#define FAIL_EXIT1(...) shim_fail (1, __FILE__, __LINE__, __VA_ARGS__)
#define FAIL_RET(...) \
  do { FAIL (__VA_ARGS__); return 1; } while (0)
#define TEST_VERIFY(expr) \
  do { if (!(expr)) FAIL ("not true: %s", #expr); } while (0)
#define TEST_VERIFY_EXIT(expr) \
  do { if (!(expr)) FAIL_EXIT1 ("not true: %s", #expr); } while (0)
/* Both sides are integers in these tests.  */
#define TEST_COMPARE(left, right)                                       \
  do {                                                                  \
    long long shim_l_ = (long long) (left);                             \
    long long shim_r_ = (long long) (right);                            \
    if (shim_l_ != shim_r_)                                             \
      shim_compare_failed (__FILE__, __LINE__, #left, shim_l_,          \
                           #right, shim_r_);                            \
  } while (0)
#endif
