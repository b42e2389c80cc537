/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile.c - the profile's records: the index by lock address, the
 * counting, the write holds a thread has open, fork, and the hand-over to
 * the report at exit (profile.h, profile_report.h).
 *
 * Memory: two regions mapped once at start (MAP_NORESERVE: only the pages
 * used are ever backed).  Records: record 0 is the dropped record (it
 * counts the acquisitions of the locks that found no room), records
 * 1..config.profile_locks the locks, handed out in order and never freed.
 * Index: open addressing with linear probing, a power of two of slots, at
 * least twice the records, so that probe runs stay short; one slot is
 * always left empty, and a lookup also stops after a full turn.
 *
 * Publication (the only ordering argument here): a slot's key and record
 * are written under profile_mutex, the record first, both with release
 * stores; a lookup (no lock) loads the key with acquire, then the record
 * with acquire, so a reader that finds the key finds the record and every
 * field written before it was published.  A later life of the address
 * replaces the record pointer (release) after filling the new record.
 * Keys are never removed, records never moved or freed.
 */
#include "profile.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../locks/events.h"
#include "config.h"
#include "message.h"
#include "profile_report.h"

/* The hot counters of one CPU's shard: one cache line. */
enum { PC_READS, PC_FAST, PC_SLOW, PC_WRITES = PC_SLOW + PROFILE_SLOW_CAUSES, PC_COUNT };
#define MAX_SHARDS 8
#define OPEN_HOLDS 16

struct shard {
	_Atomic uint64_t v[PC_COUNT];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct shard) == 64, "one shard, one cache line");
/* profile_read's index arithmetic: a class is PC_FAST + enum profile_read. */
_Static_assert(PC_FAST + PROFILE_READ_SLOW == PC_SLOW &&
	       PROFILE_READ_NA == PROFILE_READ_SLOW + PROFILE_SLOW_CAUSES, "read classes");

struct profile_lock {
	uintptr_t lock;
	const void *site;
	uint32_t generation, seq;
	uint8_t kind;          /* enum profile_kind */
	bool bias;
	_Atomic uint8_t state; /* enum profile_state */
	/* Contended paths only: waits, revocations, holds. */
	_Atomic uint64_t read_waits, read_wait_ns, read_wait_max;
	_Atomic uint64_t write_waits, write_wait_ns, write_wait_max;
	_Atomic uint64_t revocations, revocation_ns;
	_Atomic uint64_t holds, hold_ns, hold_max;
	struct shard shard[]; /* shard_count of them */
};

struct islot {
	_Atomic uintptr_t key;              /* a lock address; 0: empty */
	_Atomic(struct profile_lock *) rec; /* its current life's record */
	uint32_t lives;                     /* lives seen at the address (under the mutex) */
};

/* A write hold this thread has open: when it began. */
struct open_hold {
	const void *lock; /* NULL while being filled */
	struct profile_lock *rec;
	uint64_t t0;
};

struct open_holds {
	uint32_t n;
	struct open_hold e[OPEN_HOLDS];
};

bool profile_on;

static pthread_mutex_t profile_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *records;          /* record i at records + i * record_size */
static size_t record_size;
static uint32_t record_limit;  /* config.profile_locks */
static _Atomic uint32_t record_count; /* records handed out (under the mutex) */
static struct islot *index_slots;
static size_t index_mask, index_used; /* index_used: under the mutex */
static _Atomic bool index_full;
static _Atomic uint64_t dropped_lives;
static unsigned shard_mask;
static const char *profile_variant = "?";
static bool profile_bias;
static void (*revoked_next)(uint64_t ns);
static sigset_t fork_saved_mask;

static __thread struct profile_lock *profile_current __attribute__((tls_model("initial-exec")));
static __thread struct open_holds open_tls __attribute__((tls_model("initial-exec")));

static struct profile_lock *record_at(uint32_t i)
{
	return (struct profile_lock *)(void *)(records + (size_t)i * record_size);
}

static struct profile_lock *dropped_record(void)
{
	return record_at(0);
}

static void add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void raise_max(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);

	while (v > cur && !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_relaxed,
								  memory_order_relaxed))
		;
}

uint64_t profile_clock_ns(void)
{
	return lock_event_clock_ns();
}

/* ---- the index ---- */

static size_t addr_hash(const void *addr)
{
	uint64_t z = (uint64_t)(uintptr_t)addr;

	z = (z ^ (z >> 33)) * UINT64_C(0xff51afd7ed558ccd);
	z ^= z >> 33;
	return (size_t)z;
}

/* lock's slot, or NULL; without a lock (see the top of the file). */
static struct islot *index_find(const void *lock)
{
	size_t i = addr_hash(lock) & index_mask;

	for (size_t n = 0; n <= index_mask; n++, i = (i + 1) & index_mask) {
		uintptr_t k = atomic_load_explicit(&index_slots[i].key, memory_order_acquire);

		if (k == (uintptr_t)lock)
			return &index_slots[i];
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* An empty slot for lock (not in the index), or NULL if full; under the mutex. */
static struct islot *index_claim(const void *lock)
{
	size_t i = addr_hash(lock) & index_mask;

	if (index_used + 1 >= index_mask) { /* one slot stays empty */
		atomic_store_explicit(&index_full, true, memory_order_relaxed);
		return NULL;
	}
	while (atomic_load_explicit(&index_slots[i].key, memory_order_relaxed) != 0)
		i = (i + 1) & index_mask;
	index_used++;
	return &index_slots[i];
}

/*
 * profile_mutex, with every signal blocked: a signal handler that takes
 * an rwlock may come here on the same thread.
 */
static void table_lock(sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	pthread_mutex_lock(&profile_mutex);
}

static void table_unlock(const sigset_t *saved)
{
	pthread_mutex_unlock(&profile_mutex);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* ---- records ---- */

static bool live(struct profile_lock *p)
{
	return p == dropped_record() ||
	       atomic_load_explicit(&p->state, memory_order_relaxed) == PROFILE_LIVE;
}

/* A fresh record for a life of lock, or NULL if none is left; under the mutex. */
static struct profile_lock *record_new(const void *lock, enum profile_kind kind,
				       const void *caller, uint32_t generation)
{
	uint32_t n = atomic_load_explicit(&record_count, memory_order_relaxed);
	struct profile_lock *p;

	if (n >= record_limit)
		return NULL;
	p = record_at(n + 1);
	p->lock = (uintptr_t)lock;
	p->site = caller;
	p->generation = generation;
	p->seq = n + 1;
	p->kind = (uint8_t)kind;
	p->bias = profile_bias && kind != PROFILE_KIND_PSHARED;
	atomic_store_explicit(&p->state, PROFILE_LIVE, memory_order_relaxed);
	/* Release: the report reads records 1..count without the mutex. */
	atomic_store_explicit(&record_count, n + 1, memory_order_release);
	return p;
}

/*
 * The record of lock's current life, made under the mutex: a new life if
 * init (or the last one ended), else the one another thread made meanwhile.
 */
static struct profile_lock *lock_life(const void *lock, enum profile_kind kind, const void *caller,
				      bool init)
{
	struct profile_lock *old, *p;
	struct islot *s;
	sigset_t saved;
	uint8_t was_live = PROFILE_LIVE;

	table_lock(&saved);
	s = index_find(lock);
	old = s ? atomic_load_explicit(&s->rec, memory_order_relaxed) : NULL;
	if (!init && old && live(old)) {
		table_unlock(&saved);
		return old;
	}
	if (old && old != dropped_record())
		atomic_compare_exchange_strong_explicit(&old->state, &was_live, PROFILE_REPLACED,
							memory_order_relaxed, memory_order_relaxed);
	if (!s)
		s = index_claim(lock);
	p = s ? record_new(lock, kind, caller, s->lives + 1) : NULL;
	if (!p) {
		p = dropped_record();
		add(&dropped_lives, 1);
	}
	if (s) {
		s->lives++;
		atomic_store_explicit(&s->rec, p, memory_order_release);
		if (atomic_load_explicit(&s->key, memory_order_relaxed) == 0)
			atomic_store_explicit(&s->key, (uintptr_t)lock, memory_order_release);
	}
	table_unlock(&saved);
	return p;
}

void profile_lock_init(const void *lock, enum profile_kind kind, const void *caller)
{
	lock_life(lock, kind, caller, true);
}

void profile_lock_destroy(const void *lock)
{
	struct islot *s = index_find(lock);
	struct profile_lock *p = s ? atomic_load_explicit(&s->rec, memory_order_acquire) : NULL;
	uint8_t was_live = PROFILE_LIVE;

	if (p && p != dropped_record())
		atomic_compare_exchange_strong_explicit(&p->state, &was_live, PROFILE_DESTROYED,
							memory_order_relaxed, memory_order_relaxed);
}

struct profile_lock *profile_lock_of(const void *lock, enum profile_kind kind, const void *caller)
{
	struct islot *s = index_find(lock);
	struct profile_lock *p = s ? atomic_load_explicit(&s->rec, memory_order_acquire) : NULL;

	if (p && live(p))
		return p;
	/* No room to index another address: every new one is dropped, no mutex. */
	if (!s && atomic_load_explicit(&index_full, memory_order_relaxed))
		return dropped_record();
	return lock_life(lock, kind, caller, false);
}

/* ---- counting ---- */

/* The shard of the CPU the caller runs on (a hint: it may migrate). */
static struct shard *shard_here(struct profile_lock *p)
{
	int saved_errno = errno; /* no lock call changes errno */
	int cpu = sched_getcpu();

	errno = saved_errno;
	return &p->shard[(unsigned)cpu & shard_mask];
}

struct profile_lock *profile_enter(struct profile_lock *p)
{
	struct profile_lock *outer = profile_current;

	profile_current = p;
	return outer;
}

void profile_leave(struct profile_lock *outer)
{
	profile_current = outer;
}

void profile_waited(struct profile_lock *p, bool write, uint64_t ns)
{
	if (write) {
		add(&p->write_waits, 1);
		add(&p->write_wait_ns, ns);
		raise_max(&p->write_wait_max, ns);
	} else {
		add(&p->read_waits, 1);
		add(&p->read_wait_ns, ns);
		raise_max(&p->read_wait_max, ns);
	}
}

void profile_read(struct profile_lock *p, enum profile_read how)
{
	struct shard *sh = shard_here(p);

	add(&sh->v[PC_READS], 1);
	if (how < PROFILE_READ_NA)
		add(&sh->v[PC_FAST + how], 1);
}

/* A revocation, by this thread: the lock it is acquiring made it. */
static void on_revoked(uint64_t ns)
{
	struct profile_lock *p = profile_current;

	if (revoked_next)
		revoked_next(ns);
	if (p) {
		add(&p->revocations, 1);
		add(&p->revocation_ns, ns);
	}
}

/* ---- write holds open on this thread ---- */

/*
 * A signal handler on this thread may open and close holds of its own
 * in between: the entry is reserved (lock NULL, matched by no lookup)
 * before the count covers it and named last, and a removal moves the
 * last entry down before the count drops, as held.h does.  Past
 * OPEN_HOLDS nested write holds, a hold is not timed.
 */
static void hold_open(const void *lock, struct profile_lock *p)
{
	struct open_holds *o = &open_tls;
	uint32_t n = o->n;
	struct open_hold *e;

	if (n == OPEN_HOLDS)
		return;
	e = &o->e[n];
	e->lock = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	o->n = n + 1;
	atomic_signal_fence(memory_order_seq_cst);
	e->rec = p;
	e->t0 = profile_clock_ns();
	atomic_signal_fence(memory_order_seq_cst);
	e->lock = lock;
}

void profile_write(struct profile_lock *p, const void *lock)
{
	add(&shard_here(p)->v[PC_WRITES], 1);
	if (p != dropped_record())
		hold_open(lock, p);
}

bool profile_holds_open(void)
{
	return open_tls.n != 0;
}

void profile_write_release(const void *lock)
{
	struct open_holds *o = &open_tls;

	for (uint32_t i = o->n; i-- > 0;) {
		struct open_hold *e = &o->e[i];
		struct profile_lock *p;
		uint64_t held;
		uint32_t last;

		if (e->lock != lock)
			continue;
		p = e->rec;
		held = profile_clock_ns() - e->t0;
		last = o->n - 1;
		if (i != last)
			*e = o->e[last]; /* a handler now sees the last entry twice: harmless */
		atomic_signal_fence(memory_order_seq_cst);
		o->n = last;
		add(&p->holds, 1);
		add(&p->hold_ns, held);
		raise_max(&p->hold_max, held);
		return;
	}
}

/* ---- fork ---- */

static void fork_prepare(void)
{
	table_lock(&fork_saved_mask);
}

static void fork_parent(void)
{
	table_unlock(&fork_saved_mask);
}

static void zero_counts(struct profile_lock *p)
{
	size_t head = offsetof(struct profile_lock, read_waits);

	memset((char *)p + head, 0, record_size - head);
}

/* A forked child counts from zero, as the statistics do; its locks keep their records. */
static void fork_child(void)
{
	uint32_t n = atomic_load_explicit(&record_count, memory_order_relaxed);

	for (uint32_t i = 0; i <= n; i++)
		zero_counts(record_at(i));
	atomic_store_explicit(&dropped_lives, 0, memory_order_relaxed);
	table_unlock(&fork_saved_mask);
}

/* ---- start and report ---- */

static unsigned shards_for_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned n = 1;

	while (n < MAX_SHARDS && (long)n < cpus)
		n *= 2;
	return n;
}

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static bool map_tables(void)
{
	size_t slots = 64;

	while (slots < 2 * (size_t)record_limit + 2)
		slots *= 2;
	records = map_zeroed(((size_t)record_limit + 1) * record_size);
	index_slots = map_zeroed(slots * sizeof(struct islot));
	index_mask = slots - 1;
	return records && index_slots;
}

void profile_start(const char *variant, bool bias)
{
	int saved_errno = errno;
	unsigned shards = shards_for_cpus();

	profile_variant = variant;
	profile_bias = bias;
	shard_mask = shards - 1;
	record_size = sizeof(struct profile_lock) + shards * sizeof(struct shard);
	record_limit = config.profile_locks;
	if (!map_tables()) {
		libbravo_message("no memory for the profile of %u locks: profile off", record_limit);
		errno = saved_errno;
		return;
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	revoked_next = lock_event_revoked;
	lock_event_revoked = on_revoked;
	profile_on = true;
	errno = saved_errno;
}

static void sum_row(struct profile_lock *p, struct profile_row *r)
{
	uint64_t v[PC_COUNT] = { 0 };

	for (unsigned s = 0; s <= shard_mask; s++)
		for (int i = 0; i < PC_COUNT; i++)
			v[i] += atomic_load_explicit(&p->shard[s].v[i], memory_order_relaxed);
	*r = (struct profile_row){
		.lock = p->lock, .site = p->site, .generation = p->generation, .seq = p->seq,
		.kind = (enum profile_kind)p->kind,
		.state = (enum profile_state)atomic_load_explicit(&p->state, memory_order_relaxed),
		.bias = p->bias, .reads = v[PC_READS], .read_fast = v[PC_FAST], .writes = v[PC_WRITES],
		.read_waits = p->read_waits, .read_wait_ns = p->read_wait_ns,
		.read_wait_max = p->read_wait_max, .write_waits = p->write_waits,
		.write_wait_ns = p->write_wait_ns, .write_wait_max = p->write_wait_max,
		.revocations = p->revocations, .revocation_ns = p->revocation_ns,
		.holds = p->holds, .hold_ns = p->hold_ns, .hold_max = p->hold_max,
	};
	memcpy(r->slow, &v[PC_SLOW], sizeof(r->slow));
}

__attribute__((destructor)) static void profile_at_exit(void)
{
	int saved_errno = errno;
	uint32_t n = atomic_load_explicit(&record_count, memory_order_acquire);
	struct profile_row *rows, dropped;
	struct profile_summary s = {
		.variant = profile_variant, .records = n, .limit = record_limit,
		.top = config.profile_top, .sort = (enum profile_sort)config.profile_sort,
		.path = config.profile_file,
	};

	if (!profile_on)
		return;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		libbravo_message("no memory for the profile's report: profile dropped");
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		sum_row(record_at(i + 1), &rows[i]);
	sum_row(dropped_record(), &dropped);
	s.dropped_locks = atomic_load_explicit(&dropped_lives, memory_order_relaxed);
	s.dropped_acquisitions = dropped.reads + dropped.writes;
	s.dropped_uncounted = atomic_load_explicit(&index_full, memory_order_relaxed);
	profile_report(rows, &s);
	free(rows);
	errno = saved_errno;
}
