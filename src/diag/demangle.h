/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.h - C++ names, as the profile's report shows them.
 *
 * The report is made at exit, perhaps in a signal handler that
 * interrupted malloc, so libstdc++'s __cxa_demangle (which allocates) is
 * not used.  This reads the common forms of the Itanium ABI's mangling
 * itself, into a caller's buffer: a function named by a plain or nested
 * name (namespaces and classes, std:: abbreviated as St), constructors
 * and destructors, a const member function, and its parameter list,
 * given as "()" when it has none and "(...)" otherwise.  Anything else
 * (templates, operators, local or unnamed entities, substitutions in the
 * name) is left as it is: the mangled name, which c++filt(1) reads.
 */
#ifndef LIBBRAVO_DEMANGLE_H
#define LIBBRAVO_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../locks/hidden.h"

/* name demangled into out[size]; false (out untouched) if it is not a form read here. */
bool demangle(const char *name, char *out, size_t size) LIBBRAVO_HIDDEN;

#endif
