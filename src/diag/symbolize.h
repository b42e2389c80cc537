/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolize.h - a code address of this process as a reader wants it: the
 * object file, the function and offset, and the source file and line.
 *
 * Read from the files themselves: the object and its mapping from
 * /proc/self/maps, the function from the ELF symbol table (.symtab, else
 * .dynsym), the file and line from the DWARF line table (.debug_line,
 * versions 2 to 5), the object's own or a separate debug file's (by
 * build-id or .gnu_debuglink under /usr/lib/debug and beside the object;
 * never a debuginfod server).  C++ names are demangled where demangle.h
 * reads their form, and stay mangled otherwise.  64-bit ELF only;
 * compressed debug sections are not read.
 *
 * Made for the report at exit, which may run from a signal handler that
 * interrupted malloc or the dynamic loader on the same thread: nothing here
 * allocates or takes a lock (open, read, mmap, munmap, close and string
 * functions only; static storage), and a malformed file names less but
 * never faults.  Not thread-safe: one caller at a time, between
 * symbolizer_open and symbolizer_close.
 */
#ifndef LIBBRAVO_SYMBOLIZE_H
#define LIBBRAVO_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../locks/hidden.h"

struct site_name {
	char object[512];        /* the object's path; "" if none maps the address */
	uintptr_t object_offset; /* the address less the object's load address */
	char function[256];      /* the function's symbol, as in the symbol table; "" if unknown */
	uintptr_t function_offset;
	char file[512];          /* the source file, as full a path as the line table gives; "" if unknown */
	unsigned line;
};

/*
 * Start naming (the files mapped stay mapped until symbolizer_close).
 * Returns what the names come from, for the report's header: "elf", or
 * "none (...why...)".
 */
const char *symbolizer_open(void) LIBBRAVO_HIDDEN;
/* Name a return address (the line is looked up at address - 1, the call). */
void symbolize(const void *addr, struct site_name *out) LIBBRAVO_HIDDEN;
/* Unmap every file mapped since symbolizer_open. */
void symbolizer_close(void) LIBBRAVO_HIDDEN;
/*
 * For tests: name addr as though the file at path were mapped at map_start
 * from file offset map_offset, with its load base at base.
 */
void symbolize_in_file(const void *addr, const char *path, uintptr_t map_start,
		       uintptr_t map_offset, uintptr_t base, struct site_name *out) LIBBRAVO_HIDDEN;

#endif
