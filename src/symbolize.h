/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - a code address of this process as a reader wants it: the
 * object file, the function and offset, and the source file and line.
 *
 * dladdr gives the object and, where the address is in a symbol of the
 * dynamic symbol table, the function.  libdw (elfutils), opened with
 * dlopen("libdw.so.1") when the report is made, so that no variant links
 * it, gives the function from the full symbol table and the file and line
 * from the debug information (the object's own, or a separate debug file
 * found the standard way; never a debuginfod server).  Without libdw (not
 * installed, or libbravo built without its headers) the answer is
 * dladdr's only, and symbolizer_open says so.
 *
 * For the report at exit only: not thread-safe, allocates freely.
 */
#ifndef LIBBRAVO_SYMBOLIZE_H
#define LIBBRAVO_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "../locks/hidden.h"

struct site_name {
	char object[512];        /* the object's path; "" if none maps the address */
	uintptr_t object_offset; /* the address less the object's load address */
	char function[256];      /* the function's name, demangled where possible; "" if unknown */
	uintptr_t function_offset;
	char file[512];          /* the source file; "" if unknown */
	unsigned line;
};

/*
 * Open the symbol sources: libdw if it can be had.  Returns what the
 * names come from, for the report's header ("libdw", or "dladdr only
 * (...why...)").
 */
const char *symbolizer_open(void) LIBBRAVO_HIDDEN;
/* Name a return address (the line is looked up at address - 1, the call). */
void symbolize(const void *addr, struct site_name *out) LIBBRAVO_HIDDEN;
void symbolizer_close(void) LIBBRAVO_HIDDEN;

#endif
