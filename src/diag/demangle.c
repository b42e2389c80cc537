/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demangle.c - the common forms of Itanium C++ names (demangle.h), read
 * without allocating.
 *
 *   <mangled>   ::= _Z <encoding>
 *   <encoding>  ::= <name> [<parameters>]
 *   <name>      ::= <source-name> | St <source-name> | L <source-name>
 *                 | N [K] (<source-name> | St | C1 | C2 | C3 | D0 | D1 | D2)+ E
 *   <source-name> ::= <decimal length> <identifier>
 * A parameter list of just "v" is "()"; any other is "(...)".  A
 * constructor or destructor repeats the last name read ("~" before it).
 */
#include "demangle.h"

#include <string.h>

struct out {
	char *p;
	size_t size, len;
	bool full;
};

static void put_n(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->size) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void put(struct out *o, const char *s)
{
	put_n(o, s, strlen(s));
}

/* A <source-name> at *s: its identifier in *id, *n; false if none. */
static bool source_name(const char **s, const char **id, size_t *n)
{
	size_t len = 0;

	if (**s < '1' || **s > '9')
		return false;
	while (**s >= '0' && **s <= '9' && len < 4096)
		len = len * 10 + (size_t)(*(*s)++ - '0');
	if (strnlen(*s, len) < len)
		return false;
	*id = *s;
	*n = len;
	*s += len;
	return true;
}

/* The components of an N...E name; false if one is not read here. */
static bool nested_name(const char **s, struct out *o, bool *is_const)
{
	const char *last = NULL, *id;
	size_t last_n = 0, n;
	bool first = true;

	if (**s == 'K') {
		*is_const = true;
		(*s)++;
	}
	while (**s != 'E') {
		if (!first)
			put(o, "::");
		if ((*s)[0] == 'S' && (*s)[1] == 't' && first) {
			put(o, "std");
			*s += 2;
		} else if ((*s)[0] == 'C' && (*s)[1] >= '1' && (*s)[1] <= '3' && last) {
			put_n(o, last, last_n);
			*s += 2;
		} else if ((*s)[0] == 'D' && (*s)[1] >= '0' && (*s)[1] <= '2' && last) {
			put(o, "~");
			put_n(o, last, last_n);
			*s += 2;
		} else if (source_name(s, &id, &n)) {
			put_n(o, id, n);
			last = id;
			last_n = n;
		} else {
			return false;
		}
		first = false;
	}
	(*s)++;
	return !first;
}

/* Longest demangled name read; a longer one stays mangled. */
#define DEMANGLED_MAX 512

bool demangle(const char *name, char *out, size_t size)
{
	char buf[DEMANGLED_MAX];
	struct out o = { buf, size < sizeof(buf) ? size : sizeof(buf), 0, false };
	const char *s = name, *id;
	bool is_const = false;
	size_t n;

	if (size == 0 || strncmp(s, "_Z", 2) != 0)
		return false;
	s += 2;
	buf[0] = '\0';
	if (*s == 'N') {
		s++;
		if (!nested_name(&s, &o, &is_const))
			return false;
	} else {
		if (*s == 'L')
			s++;
		if (s[0] == 'S' && s[1] == 't') {
			put(&o, "std::");
			s += 2;
		}
		if (!source_name(&s, &id, &n))
			return false;
		put_n(&o, id, n);
	}
	/* A clone's suffix (.constprop.0, .cold, ...) ends the parameters. */
	if (*s && *s != '.')
		put(&o, s[0] == 'v' && (s[1] == '\0' || s[1] == '.') ? "()" : "(...)");
	if (is_const)
		put(&o, " const");
	if (*s == '.' || (*s && (s = strchr(s, '.')) != NULL))
		put(&o, s);
	if (o.full)
		return false;
	memcpy(out, buf, o.len + 1);	/* only a whole name reaches out */
	return true;
}
