/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hidden.h - LIBBRAVO_HIDDEN, for the extern declarations of the
 * library's own globals.
 *
 * -fvisibility=hidden hides definitions only; a reference through a
 * plain extern declaration still goes through the GOT (one more load on
 * the lock paths).  Declared hidden, it binds locally.
 */
#ifndef LIBBRAVO_HIDDEN_H
#define LIBBRAVO_HIDDEN_H

#define LIBBRAVO_HIDDEN __attribute__((visibility("hidden")))

#endif
