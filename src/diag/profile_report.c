/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_report.c - the profile's report at exit (profile_report.h).
 *
 * The rows are ranked by the chosen key, ties broken by time waited, then
 * acquisitions, then creation order, so a report is deterministic for a
 * deterministic program.  The top N are named (symbolize.h) and written in
 * one write(2): a table on stderr (only if fd 2 is still the stderr of
 * the load, message.h), or CSV appended to BRAVO_PROFILE_FILE, opened as
 * the statistics file is (libbravo_report_open), with the header line
 * when the file is empty.  Runs at exit, perhaps from a signal handler
 * that interrupted malloc: it allocates from the pool (pool.h) only and
 * takes no lock; names come from symbolize.h, which does the same.
 *
 * Text that is not libbravo's own -- object paths, function and file
 * names, which a program's name (argv[0], a symbolic link) or its build
 * chose -- is written escaped: control characters and backslashes as C
 * escapes (\n, \x1b, \\), so that no report line can be made to hold a
 * line break; and every CSV field that holds a comma or a quote is quoted
 * (RFC 4180).
 *
 * Columns a variant without BRAVO cannot fill (fast reads, slow reads by
 * cause, revocations) say n/a in the table and are empty in the CSV; so
 * are they for a process-shared lock, which is glibc's under every
 * variant.
 */
#include "profile_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../interpose/config.h"
#include "message.h"
#include "../interpose/pool.h"
#include "symbolize.h"

/* A growing text, in pool memory; on no memory it stops growing (the report is cut). */
struct text {
	char *p;
	size_t len, cap;
	bool cut;
};

static bool text_room(struct text *t, size_t more)
{
	size_t cap;
	char *p;

	if (t->len + more + 1 <= t->cap)
		return true;
	if (t->cut)
		return false;
	cap = (t->cap ? t->cap * 2 : 16384) + more;
	p = pool_alloc(cap);
	if (!p) {
		t->cut = true;
		return false;
	}
	if (t->p) {
		memcpy(p, t->p, t->len);
		pool_free(t->p, t->cap);
	}
	t->p = p;
	t->cap = cap;
	return true;
}

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !text_room(t, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/*
 * v with its control characters and backslashes escaped (see the top),
 * in out[size]; cut short rather than overflow.
 */
static const char *escaped(const char *v, char *out, size_t size)
{
	size_t o = 0;

	for (; *v && o + 5 < size; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return out;
}

/* ---- ranking ---- */

static uint64_t total_wait(const struct profile_row *r)
{
	return r->read_wait_ns + r->write_wait_ns;
}

static uint64_t slow_reads(const struct profile_row *r)
{
	uint64_t n = 0;

	for (int i = 0; i < PROFILE_SLOW_CAUSES; i++)
		n += r->slow[i];
	return r->bias ? n : 0;
}

static double sort_key(const struct profile_row *r, enum profile_sort by)
{
	uint64_t acq = r->reads + r->writes;

	switch (by) {
	case PROFILE_SORT_ACQUISITIONS:
		return (double)acq;
	case PROFILE_SORT_SLOW_READS:
		return (double)slow_reads(r);
	case PROFILE_SORT_REVOCATIONS:
		return r->bias ? (double)r->revocations : 0;
	case PROFILE_SORT_WRITER_SHARE:
		return acq ? (double)r->writes / (double)acq : 0;
	default:
		return (double)total_wait(r);
	}
}

static enum profile_sort ranking;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int by_rank(const struct profile_row *a, const struct profile_row *b)
{
	double ka = sort_key(a, ranking), kb = sort_key(b, ranking);
	int c;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if ((c = cmp_u64_desc(total_wait(a), total_wait(b))) != 0)
		return c;
	if ((c = cmp_u64_desc(a->reads + a->writes, b->reads + b->writes)) != 0)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void swap_rows(struct profile_row *a, struct profile_row *b)
{
	struct profile_row t = *a;

	*a = *b;
	*b = t;
}

/* Restore the heap below i (the last in rank at the root). */
static void sift_down(struct profile_row *rows, size_t i, size_t n)
{
	for (size_t child; (child = 2 * i + 1) < n; i = child) {
		if (child + 1 < n && by_rank(&rows[child + 1], &rows[child]) > 0)
			child++;
		if (by_rank(&rows[child], &rows[i]) <= 0)
			return;
		swap_rows(&rows[i], &rows[child]);
	}
}

/* Rows in rank order: a heap sort (qsort may call malloc). */
static void sort_rows(struct profile_row *rows, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(rows, i, n);
	for (size_t end = n; end-- > 1;) {
		swap_rows(&rows[0], &rows[end]);
		sift_down(rows, 0, end);
	}
}

/* ---- names ---- */

static const char *const kind_names[] = { "default", "writer-preferring", "process-shared" };
static const char *const state_names[] = { "live", "destroyed", "reinit" };
static const char *const sort_words[] = {
	"time waited", "acquisitions", "slow reads", "revocations", "writer share",
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* "function+0x1d (object) file.c:42", what is known of it (not escaped). */
static void site_text(const struct site_name *n, char *out, size_t size)
{
	const char *obj = n->object[0] ? base_name(n->object) : "?";
	int len;

	if (n->function[0])
		len = snprintf(out, size, "%s+0x%lx (%s)", n->function,
			       (unsigned long)n->function_offset, obj);
	else
		len = snprintf(out, size, "%s+0x%lx", obj, (unsigned long)n->object_offset);
	if (n->file[0] && len > 0 && (size_t)len < size)
		snprintf(out + len, size - (size_t)len, " %s:%u", base_name(n->file), n->line);
}

/* Room for a name escaped: each byte may become four. */
#define ESCAPED(size) (4 * (size) + 1)

/* ---- the table ---- */

enum { COLS = 17, CELL = 48 };

static const char *const headers[COLS] = {
	"#", "lock", "kind", "state", "reads", "writes", "fast%", "slow off/inh/ww/col/race",
	"revoc", "revoc_ms", "rd_waits", "rd_wait_ms", "rd_max_us", "wr_waits", "wr_wait_ms",
	"wr_max_us", "hold_max_us",
};

static void ms(char *cell, uint64_t ns)
{
	snprintf(cell, CELL, "%.3f", (double)ns / 1e6);
}

static void us(char *cell, uint64_t ns)
{
	snprintf(cell, CELL, "%.1f", (double)ns / 1e3);
}

static void u64(char *cell, uint64_t v)
{
	snprintf(cell, CELL, "%llu", (unsigned long long)v);
}

static void table_cells(const struct profile_row *r, unsigned rank, char cells[COLS][CELL])
{
	snprintf(cells[0], CELL, "%u", rank);
	snprintf(cells[1], CELL, "0x%lx#%u", (unsigned long)r->lock, r->generation);
	snprintf(cells[2], CELL, "%s", kind_names[r->kind]);
	snprintf(cells[3], CELL, "%s", state_names[r->state]);
	u64(cells[4], r->reads);
	u64(cells[5], r->writes);
	if (r->bias) {
		snprintf(cells[6], CELL, "%.1f", r->reads ? 100.0 * (double)r->read_fast / (double)r->reads : 0.0);
		snprintf(cells[7], CELL, "%llu/%llu/%llu/%llu/%llu", (unsigned long long)r->slow[0],
			 (unsigned long long)r->slow[1], (unsigned long long)r->slow[2],
			 (unsigned long long)r->slow[3], (unsigned long long)r->slow[4]);
		u64(cells[8], r->revocations);
		ms(cells[9], r->revocation_ns);
	} else {
		for (int i = 6; i <= 9; i++)
			snprintf(cells[i], CELL, "n/a");
	}
	u64(cells[10], r->read_waits);
	ms(cells[11], r->read_wait_ns);
	us(cells[12], r->read_wait_max);
	u64(cells[13], r->write_waits);
	ms(cells[14], r->write_wait_ns);
	us(cells[15], r->write_wait_max);
	us(cells[16], r->hold_max);
}

static void put_row(struct text *t, char cells[COLS][CELL], const int width[COLS], const char *site)
{
	for (int c = 0; c < COLS; c++) {
		bool left = c == 1 || c == 2 || c == 3;

		put(t, "%s%*s", c ? "  " : "", left ? -width[c] : width[c], cells[c]);
	}
	put(t, "  %s\n", site);
}

static void write_table(struct text *t, const struct profile_row *rows, unsigned n,
			const struct profile_summary *s, const char *symbols)
{
	size_t cells_bytes = ((size_t)n + 1) * sizeof(char[COLS][CELL]);
	char (*cells)[COLS][CELL] = pool_alloc(cells_bytes);
	int width[COLS];

	put(t, "libbravo: profile variant=%s pid=%ld: %u lock%s, %s%u by %s (BRAVO_PROFILE_SORT=%s); "
	    "symbols: %s\n", s->variant, (long)getpid(), s->records, s->records == 1 ? "" : "s",
	    n < s->records ? "the busiest " : "all ", n, sort_words[s->sort],
	    config_profile_sort_names[s->sort], symbols);
	if (!cells || n == 0) {
		pool_free(cells, cells_bytes);
		return;
	}
	for (int c = 0; c < COLS; c++) {
		snprintf(cells[0][c], CELL, "%s", headers[c]);
		width[c] = (int)strlen(headers[c]);
	}
	for (unsigned i = 0; i < n; i++) {
		table_cells(&rows[i], i + 1, cells[i + 1]);
		for (int c = 0; c < COLS; c++)
			if ((int)strlen(cells[i + 1][c]) > width[c])
				width[c] = (int)strlen(cells[i + 1][c]);
	}
	put_row(t, cells[0], width, "site");
	for (unsigned i = 0; i < n; i++) {
		static struct site_name name;
		static char site[1400], safe[ESCAPED(1400)];

		symbolize(rows[i].site, &name);
		site_text(&name, site, sizeof(site));
		put_row(t, cells[i + 1], width, escaped(site, safe, sizeof(safe)));
	}
	pool_free(cells, cells_bytes);
	if (s->evicted_lives)
		put(t, "libbravo: profile: evicted: %llu lock lives, the least acquired, to make room "
		    "(BRAVO_PROFILE_LOCKS=%u records): %llu acquisitions, %.3f ms waited on them\n",
		    (unsigned long long)s->evicted_lives, s->limit,
		    (unsigned long long)(s->evicted.reads + s->evicted.writes),
		    (double)(s->evicted.read_wait_ns + s->evicted.write_wait_ns) / 1e6);
}

/* ---- the CSV ---- */

#define CSV_HEADER                                                                          \
	"pid,variant,rank,lock,generation,state,kind,reads,writes,read_fast_fraction,read_fast," \
	"read_slow_bias_off,read_slow_inhibited,read_slow_writer_waiting,read_slow_collision,"   \
	"read_slow_lost_race,revocations,revocation_ns,read_waits,read_wait_ns,read_wait_max_ns," \
	"write_waits,write_wait_ns,write_wait_max_ns,write_holds,write_hold_ns,"                 \
	"write_hold_max_ns,site,site_function,site_object,site_object_offset,site_source\n"

/*
 * A CSV field: escaped (see the top), so it holds no line break, then
 * quoted when it holds a comma or a quote (RFC 4180).
 */
static void put_field(struct text *t, const char *v)
{
	static char safe[ESCAPED(1400)];

	v = escaped(v, safe, sizeof(safe));
	if (!strpbrk(v, ",\"")) {
		put(t, ",%s", v);
		return;
	}
	put(t, ",\"");
	for (; *v; v++)
		put(t, "%s%c", *v == '"' ? "\"" : "", *v);
	put(t, "\"");
}

static void put_u64(struct text *t, uint64_t v)
{
	put(t, ",%llu", (unsigned long long)v);
}

/* A BRAVO column: empty where it does not apply. */
static void put_bias(struct text *t, const struct profile_row *r, uint64_t v)
{
	if (r->bias)
		put_u64(t, v);
	else
		put(t, ",");
}

/* A row's counts, from reads to write_hold_max_ns. */
static void csv_counts(struct text *t, const struct profile_row *r)
{
	put_u64(t, r->reads);
	put_u64(t, r->writes);
	if (r->bias)
		put(t, ",%.6f", r->reads ? (double)r->read_fast / (double)r->reads : 0.0);
	else
		put(t, ",");
	put_bias(t, r, r->read_fast);
	for (int i = 0; i < PROFILE_SLOW_CAUSES; i++)
		put_bias(t, r, r->slow[i]);
	put_bias(t, r, r->revocations);
	put_bias(t, r, r->revocation_ns);
	put_u64(t, r->read_waits);
	put_u64(t, r->read_wait_ns);
	put_u64(t, r->read_wait_max);
	put_u64(t, r->write_waits);
	put_u64(t, r->write_wait_ns);
	put_u64(t, r->write_wait_max);
	put_u64(t, r->holds);
	put_u64(t, r->hold_ns);
	put_u64(t, r->hold_max);
}

static void csv_row(struct text *t, const struct profile_row *r, unsigned rank,
		    const struct profile_summary *s)
{
	static struct site_name n;
	static char site[1400], func[300], offset[32], source[600];

	symbolize(r->site, &n);
	site_text(&n, site, sizeof(site));
	snprintf(func, sizeof(func), n.function[0] ? "%s+0x%lx" : "", n.function,
		 (unsigned long)n.function_offset);
	snprintf(offset, sizeof(offset), "0x%lx", (unsigned long)n.object_offset);
	snprintf(source, sizeof(source), n.file[0] ? "%s:%u" : "", n.file, n.line);
	put(t, "%ld,%s,%u,0x%lx,%u,%s,%s", (long)getpid(), s->variant, rank, (unsigned long)r->lock,
	    r->generation, state_names[r->state], kind_names[r->kind]);
	csv_counts(t, r);
	put_field(t, site);
	put_field(t, func);
	put_field(t, n.object);
	put_field(t, offset);
	put_field(t, source);
	put(t, "\n");
}

/*
 * The lives evicted to make room: one row, state "evicted", no rank, lock,
 * kind or site, their number in the generation column, their counts.
 */
static void csv_evicted(struct text *t, const struct profile_summary *s)
{
	put(t, "%ld,%s,,,%llu,evicted,", (long)getpid(), s->variant,
	    (unsigned long long)s->evicted_lives);
	csv_counts(t, &s->evicted);
	put(t, ",,,,,\n");
}

static void write_csv(struct text *t, const struct profile_row *rows, unsigned n,
		      const struct profile_summary *s, bool header)
{
	if (header)
		put(t, CSV_HEADER);
	for (unsigned i = 0; i < n; i++)
		csv_row(t, &rows[i], i + 1, s);
	if (s->evicted_lives)
		csv_evicted(t, s);
}

/* ---- writing ---- */

void profile_report(struct profile_row *rows, const struct profile_summary *s)
{
	struct text t = { 0 };
	int err;
	unsigned n = s->top && s->top < s->records ? s->top : s->records;
	const char *symbols;
	bool empty = false;
	int fd = 2;

	ranking = s->sort;
	sort_rows(rows, s->records);
	if (s->path) {
		fd = libbravo_report_open(s->path, "profile", &empty);
		if (fd < 0)
			return;
	} else if (!libbravo_stderr_writable(true)) {
		return; /* stderr is not the one the program started with */
	}
	symbols = symbolizer_open();
	if (s->path)
		write_csv(&t, rows, n, s, empty);
	else
		write_table(&t, rows, n, s, symbols);
	symbolizer_close();
	/* One write: reports of several processes to one file do not interleave. */
	if (t.p && (err = libbravo_write(fd, t.p, t.len)) != 0 && s->path) {
		char why[128];

		libbravo_message("cannot write the profile to %s: %s; profile dropped", s->path,
				 strerror_r(err, why, sizeof(why)));
	}
	if (t.cut)
		libbravo_message("no memory for the whole profile: the report is cut short");
	if (s->path)
		close(fd);
	if (t.p)
		pool_free(t.p, t.cap);
}
