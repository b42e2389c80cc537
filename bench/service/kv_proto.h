/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv_proto.h - what kv_server and kv_load agree on: the value of a key and
 * how it is written in the line protocol (bench/README.md, "kv_server and
 * kv_load").  Plain C11; no libbravo header.
 *
 * A value is a version and its check, written "VERSION.CHECK": VERSION in
 * decimal, CHECK in 16 hex digits.  The check is kv_check(key, version), a
 * 64-bit hash of both.  A value read for a key whose check is right is one
 * written for that key (by a client, or the server's initial version 0):
 * not another key's, and not the version of one write with the check of
 * another (a torn value).
 */
#ifndef KV_PROTO_H
#define KV_PROTO_H

#include <inttypes.h>
#include <stdint.h>

/* printf format of a value: version, then check */
#define KV_VALUE_FORMAT "%" PRIu64 ".%016" PRIx64
/* the longest request or answer line, newline included, that either side takes */
#define KV_LINE_MAX 256
/* the most keys a table may have (a client keeps 8 bytes per key per connection) */
#define KV_KEYS_MAX (1u << 24)

/* splitmix64's finalizer: every input bit moves every output bit */
static inline uint64_t kv_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* the check of version VERSION of key KEY */
static inline uint64_t kv_check(uint64_t key, uint64_t version)
{
	return kv_mix64(kv_mix64(key + UINT64_C(0x9e3779b97f4a7c15)) ^ version);
}

/* A decimal number at S (digits only, no sign, no blank): its value in
 * *OUT and the first character after it, or NULL if there is none or it
 * does not fit 64 bits. */
static inline const char *kv_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (p == s)
		return NULL;
	*out = v;
	return p;
}

static inline int kv_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A value "VERSION.CHECK" at S: *VERSION, *CHECK and the first character
 * after it, or NULL if S does not start with one. */
static inline const char *kv_parse_value(const char *s, uint64_t *version, uint64_t *check)
{
	uint64_t c = 0;
	const char *p = kv_parse_u64(s, version);

	if (p == NULL || *p != '.')
		return NULL;
	p++;
	for (int i = 0; i < 16; i++, p++) {
		int d = kv_hex_digit(*p);
		if (d < 0)
			return NULL;
		c = c << 4 | (uint64_t)d;
	}
	*check = c;
	return p;
}

#endif
