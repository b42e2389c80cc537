/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile.c - the profile's records: the index by lock address, the
 * counting, the write holds a thread has open, fork, and the hand-over to
 * the report at exit (profile.h, profile_report.h).
 *
 * Memory: fixed regions mapped once at start (MAP_NORESERVE: only the
 * pages used are ever backed), whatever the program does.  Records:
 * record 0 is the evicted record (what the evicted lives counted), records
 * 1..config.profile_locks the lock lives.  When none is free, a quarter of
 * them (at least one), the least acquired to within a factor of two, are
 * evicted at once: their counts are moved into record 0 and they are
 * reused, so a program that makes millions of short-lived locks keeps its
 * busy ones in the table (amortized: one scan of the records per quarter
 * of them made).
 *
 * Index: open addressing with linear probing over a power of two of slots,
 * at least twice the records.  Each key (lock address) points to its
 * current life's record, and each record is pointed to by one key at most,
 * so at most half the slots hold keys; an evicted record's key becomes a
 * tombstone, and when keys and tombstones fill three quarters of the
 * slots, the index is rebuilt in place.  A lookup stops at an empty slot or
 * after a full turn.
 *
 * Everything but the counters changes under profile_mutex only.  Lookups
 * take no lock; a slot's contents change as: key to 0 or a tombstone,
 * then the record pointer (release), then the new key (release).  A lookup
 * loads the key (acquire), the record (acquire) and the key again: if both
 * keys are its lock, the record is that key's (a record stored after the
 * key was cleared would, by its release, make the clearing visible to the
 * second load).  Anything else sends it to the mutex.  A record found may
 * still be evicted and reused before the caller counts in it: the counts
 * of the calls in flight then go to the record's next life, and the totals
 * still add up (eviction moves counts with atomic exchanges).  Records are
 * never unmapped, so a stale pointer is always a record.
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
#include <sys/rseq.h>
#include <unistd.h>

#include "../../locks/events.h"
#include "../interpose/addr_hash.h"
#include "../interpose/config.h"
#include "message.h"
#include "profile_report.h"
#include "../interpose/pool.h"
#include "../interpose/table_lock.h"

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
	struct profile_lock_head head; /* seq: lives made before this one, plus one */
	/* Written under the mutex only, read under it (the report) */
	uintptr_t lock;
	const void *site;
	uint32_t generation;
	uint8_t kind;          /* enum profile_kind */
	bool bias;
	/* Also read without the mutex */
	_Atomic uint8_t state; /* enum profile_state, or RECORD_FREE */
	_Atomic bool fresh;    /* made by an acquisition that has not counted in it yet */
	/* Contended paths only: waits, revocations, holds. */
	_Atomic uint64_t read_waits, read_wait_ns, read_wait_max;
	_Atomic uint64_t write_waits, write_wait_ns, write_wait_max;
	_Atomic uint64_t revocations, revocation_ns;
	_Atomic uint64_t holds, hold_ns, hold_max;
	struct shard shard[]; /* shard_count of them */
};

/* A record evicted, not yet reused: no report, no index entry. */
#define RECORD_FREE 0xff
/* A slot whose key was removed: lookups probe past it. */
#define TOMBSTONE ((uintptr_t)1)

struct islot {
	_Atomic uintptr_t key;              /* a lock address; 0: empty; TOMBSTONE */
	_Atomic(struct profile_lock *) rec; /* its current life's record */
};

/* A write hold this thread has open: when it began, in which life. */
struct open_hold {
	const void *lock; /* NULL while being filled */
	struct profile_lock *rec;
	uint32_t seq;     /* rec's seq: a hold whose record was evicted is not timed */
	uint64_t t0;
};

struct open_holds {
	uint32_t n;
	struct open_hold e[OPEN_HOLDS];
};

bool profile_on;

static pthread_mutex_t profile_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Under the mutex, but for the counters in the records */
static char *records;          /* record i at records + i * record_size */
static size_t record_size;
static uint32_t record_limit;  /* config.profile_locks */
static uint32_t record_count;  /* records handed out at least once */
static uint32_t *free_records; /* evicted, to be reused: free_count of them */
static uint32_t free_count;
static uint32_t lives_made;
static uint64_t evicted_lives;
static struct islot *index_slots;
static struct islot *index_scratch; /* the keys while the index is rebuilt */
static size_t index_mask, index_used; /* index_used: keys and tombstones */
static unsigned shard_mask;
static ptrdiff_t rseq_cpu_offset; /* 0: rseq not registered (set at start) */
static const char *profile_variant = "?";
static bool profile_bias;
static void (*revoked_next)(uint64_t ns);
static struct table_guard fork_saved_mask;

__thread struct profile_pending profile_current __attribute__((tls_model("initial-exec")));
static __thread struct open_holds open_tls __attribute__((tls_model("initial-exec")));

static struct profile_lock *record_at(uint32_t i)
{
	return (struct profile_lock *)(void *)(records + (size_t)i * record_size);
}

/* Where the evicted lives' counts go. */
static struct profile_lock *evicted_record(void)
{
	return record_at(0);
}

static void add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

void profile_revocations_add(struct profile_lock *p, uint64_t n, uint64_t ns)
{
	add(&p->revocations, n);
	add(&p->revocation_ns, ns);
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

/* lock's record, or NULL: without the mutex (see the top of the file). */
static struct profile_lock *index_lookup(const void *lock)
{
	size_t i = addr_hash(lock) & index_mask;

	for (size_t n = 0; n <= index_mask; n++, i = (i + 1) & index_mask) {
		uintptr_t k = atomic_load_explicit(&index_slots[i].key, memory_order_acquire);
		struct profile_lock *p;

		if (k == 0)
			return NULL;
		if (k != (uintptr_t)lock)
			continue;
		p = atomic_load_explicit(&index_slots[i].rec, memory_order_acquire);
		/* After the acquire above: the key still there means p is its record. */
		if (atomic_load_explicit(&index_slots[i].key, memory_order_relaxed) != k)
			return NULL;
		return p;
	}
	return NULL;
}

/* lock's slot, or NULL; under the mutex. */
static struct islot *index_find(const void *lock)
{
	size_t i = addr_hash(lock) & index_mask;

	for (size_t n = 0; n <= index_mask; n++, i = (i + 1) & index_mask) {
		uintptr_t k = atomic_load_explicit(&index_slots[i].key, memory_order_relaxed);

		if (k == (uintptr_t)lock)
			return &index_slots[i];
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* Publish (key, p) in slot s, in the order lookups rely on; under the mutex. */
static void slot_set(struct islot *s, uintptr_t key, struct profile_lock *p)
{
	atomic_store_explicit(&s->key, 0, memory_order_relaxed);
	atomic_store_explicit(&s->rec, p, memory_order_release);
	atomic_store_explicit(&s->key, key, memory_order_release);
}

/* The first free slot (empty or a tombstone) on key's probe path; under the mutex. */
static struct islot *slot_free_for(uintptr_t key)
{
	size_t i = addr_hash((const void *)key) & index_mask;

	for (;;) {
		uintptr_t k = atomic_load_explicit(&index_slots[i].key, memory_order_relaxed);

		if (k == 0 || k == TOMBSTONE)
			return &index_slots[i];
		i = (i + 1) & index_mask;
	}
}

/*
 * Tombstones gone: the keys taken out and put back.  A lookup meanwhile
 * finds its key, or an empty slot and the mutex; under the mutex.
 */
static void index_rebuild(void)
{
	size_t keys = 0;

	for (size_t i = 0; i <= index_mask; i++) {
		struct islot *s = &index_slots[i];
		uintptr_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

		if (k != 0 && k != TOMBSTONE) {
			index_scratch[keys].key = k;
			index_scratch[keys++].rec = atomic_load_explicit(&s->rec, memory_order_relaxed);
		}
		slot_set(s, 0, NULL);
	}
	for (size_t j = 0; j < keys; j++)
		slot_set(slot_free_for(index_scratch[j].key), index_scratch[j].key,
			 index_scratch[j].rec);
	index_used = keys;
}

/* Index lock (not in it) to p; under the mutex. */
static void index_add(const void *lock, struct profile_lock *p)
{
	struct islot *s;

	/* keys <= records <= slots / 2: a rebuild leaves room */
	if (index_used + 1 > index_mask - index_mask / 4)
		index_rebuild();
	s = slot_free_for((uintptr_t)lock);
	if (atomic_load_explicit(&s->key, memory_order_relaxed) == 0)
		index_used++;
	slot_set(s, (uintptr_t)lock, p);
}

/* Take p's address out of the index, if it points to p; under the mutex. */
static void index_remove(struct profile_lock *p)
{
	struct islot *s = index_find((const void *)p->lock);

	if (s && atomic_load_explicit(&s->rec, memory_order_relaxed) == p)
		slot_set(s, TOMBSTONE, NULL);
}

/* ---- records ---- */

static bool live(struct profile_lock *p)
{
	return atomic_load_explicit(&p->state, memory_order_relaxed) == PROFILE_LIVE;
}

static uint64_t take(_Atomic uint64_t *c)
{
	return atomic_exchange_explicit(c, 0, memory_order_relaxed);
}

/* p's acquisitions so far. */
static uint64_t acquisitions(struct profile_lock *p)
{
	uint64_t n = 0;

	for (unsigned s = 0; s <= shard_mask; s++)
		n += atomic_load_explicit(&p->shard[s].v[PC_READS], memory_order_relaxed) +
		     atomic_load_explicit(&p->shard[s].v[PC_WRITES], memory_order_relaxed);
	return n;
}

/* 0 for 0, else 1 + floor(log2(n)): what eviction ranks by. */
static unsigned magnitude(uint64_t n)
{
	return n ? 64 - (unsigned)__builtin_clzll(n) : 0;
}

/* Move p's counts into the evicted record, and free p; under the mutex. */
static void evict(struct profile_lock *p, uint32_t i)
{
	struct profile_lock *e = evicted_record();

	index_remove(p);
	atomic_store_explicit(&p->state, RECORD_FREE, memory_order_relaxed);
	for (unsigned s = 0; s <= shard_mask; s++)
		for (int c = 0; c < PC_COUNT; c++)
			add(&e->shard[0].v[c], take(&p->shard[s].v[c]));
	add(&e->read_waits, take(&p->read_waits));
	add(&e->read_wait_ns, take(&p->read_wait_ns));
	raise_max(&e->read_wait_max, take(&p->read_wait_max));
	add(&e->write_waits, take(&p->write_waits));
	add(&e->write_wait_ns, take(&p->write_wait_ns));
	raise_max(&e->write_wait_max, take(&p->write_wait_max));
	add(&e->revocations, take(&p->revocations));
	add(&e->revocation_ns, take(&p->revocation_ns));
	add(&e->holds, take(&p->holds));
	add(&e->hold_ns, take(&p->hold_ns));
	raise_max(&e->hold_max, take(&p->hold_max));
	evicted_lives++;
	free_records[free_count++] = i;
}

/*
 * Room for new lives: the least acquired quarter of the records (at least
 * one) evicted.  Spared: the records of the last quarter of lives made
 * (a lock just made has had no time to be acquired; between two
 * evictions, a quarter is made), and those whose making acquisition has
 * not counted yet (its thread may have been preempted for long).  Ranked by magnitude, so
 * two passes and no sorting: the smallest magnitude m such that the
 * records below or at it are enough, then all below it and, in record
 * order, enough of those at it; under the mutex.
 */
static void evict_least_acquired(void)
{
	uint32_t want = record_limit / 4 ? record_limit / 4 : 1, below = 0, at, old = 0;
	uint32_t young_after = lives_made > want ? lives_made - want : 0;
	uint32_t count[65] = { 0 };
	unsigned m = 0;

	for (uint32_t i = 1; i <= record_count; i++)
		if (atomic_load_explicit(&record_at(i)->head.seq, memory_order_relaxed) <= young_after &&
		    !atomic_load_explicit(&record_at(i)->fresh, memory_order_relaxed)) {
			count[magnitude(acquisitions(record_at(i)))]++;
			old++;
		}
	if (want > old)
		want = old;
	while (m < 64 && below + count[m] < want)
		below += count[m++];
	at = want - below;
	for (uint32_t i = 1; i <= record_count && free_count < want; i++) {
		struct profile_lock *p = record_at(i);
		unsigned pm;

		if (atomic_load_explicit(&p->head.seq, memory_order_relaxed) > young_after ||
		    atomic_load_explicit(&p->fresh, memory_order_relaxed))
			continue;
		pm = magnitude(acquisitions(p));
		if (pm < m || (pm == m && at && at--))
			evict(p, i);
	}
	/* All young, or counts grew past m since the first pass: one goes anyway. */
	if (free_count == 0)
		evict(record_at(record_count), record_count);
}

/* A record for a life of lock, evicting if none is free; under the mutex. */
static struct profile_lock *record_new(const void *lock, enum profile_kind kind,
				       const void *caller, uint32_t generation, bool fresh)
{
	struct profile_lock *p;

	if (free_count == 0 && record_count == record_limit)
		evict_least_acquired();
	p = free_count ? record_at(free_records[--free_count]) : record_at(++record_count);
	p->lock = (uintptr_t)lock;
	p->site = caller;
	p->generation = generation;
	p->kind = (uint8_t)kind;
	p->bias = profile_bias && kind != PROFILE_KIND_PSHARED;
	atomic_store_explicit(&p->head.seq, ++lives_made, memory_order_relaxed);
	atomic_store_explicit(&p->fresh, fresh, memory_order_relaxed);
	atomic_store_explicit(&p->state, PROFILE_LIVE, memory_order_relaxed);
	return p;
}

/*
 * The record of lock's current life, made under the mutex: a new life if
 * init (or the last one ended, or was evicted), else the one another
 * thread made meanwhile.
 */
static struct profile_lock *lock_life(const void *lock, enum profile_kind kind, const void *caller,
				      bool init)
{
	struct profile_lock *old, *p;
	struct islot *s;
	struct table_guard saved;
	uint32_t generation = 1;
	uint8_t was_live = PROFILE_LIVE;

	table_lock(&profile_mutex, &saved);
	s = index_find(lock);
	old = s ? atomic_load_explicit(&s->rec, memory_order_relaxed) : NULL;
	if (!init && old && live(old)) {
		table_unlock(&profile_mutex, &saved);
		return old;
	}
	if (old) {
		atomic_compare_exchange_strong_explicit(&old->state, &was_live, PROFILE_REPLACED,
							memory_order_relaxed, memory_order_relaxed);
		generation = old->generation + 1;
	}
	/* Made first: eviction may take old, and lock's slot, out of the index. */
	p = record_new(lock, kind, caller, generation, !init);
	s = index_find(lock);
	if (s)
		slot_set(s, (uintptr_t)lock, p);
	else
		index_add(lock, p);
	table_unlock(&profile_mutex, &saved);
	return p;
}

void profile_lock_init(const void *lock, enum profile_kind kind, const void *caller)
{
	lock_life(lock, kind, caller, true);
}

/* Under the mutex: a lookup's record may be evicted and reused meanwhile. */
void profile_lock_destroy(const void *lock)
{
	struct table_guard saved;
	struct islot *s;
	struct profile_lock *p;
	uint8_t was_live = PROFILE_LIVE;

	table_lock(&profile_mutex, &saved);
	s = index_find(lock);
	p = s ? atomic_load_explicit(&s->rec, memory_order_relaxed) : NULL;
	if (p)
		atomic_compare_exchange_strong_explicit(&p->state, &was_live, PROFILE_DESTROYED,
							memory_order_relaxed, memory_order_relaxed);
	table_unlock(&profile_mutex, &saved);
}

struct profile_lock *profile_lock_of(const void *lock, enum profile_kind kind, const void *caller)
{
	struct profile_lock *p = index_lookup(lock);

	if (p && live(p))
		return p;
	return lock_life(lock, kind, caller, false);
}

/* ---- counting ---- */

/*
 * The shard of the CPU the caller runs on (a hint: it may migrate): one
 * load of rseq's cpu_id_start where glibc registered rseq (2.35 and
 * later), else sched_getcpu.
 */
static struct shard *shard_here(struct profile_lock *p)
{
	unsigned cpu;

	if (__builtin_expect(rseq_cpu_offset != 0, 1)) {
		/* Relaxed: the kernel rewrites it on migration; any recent value will do. */
		cpu = atomic_load_explicit((_Atomic uint32_t *)(void *)
					   ((char *)__builtin_thread_pointer() + rseq_cpu_offset),
					   memory_order_relaxed);
	} else {
		int saved_errno = errno; /* no lock call changes errno */

		cpu = (unsigned)sched_getcpu();
		errno = saved_errno;
	}
	return &p->shard[cpu & shard_mask];
}

void profile_counted(struct profile_lock *p)
{
	if (atomic_load_explicit(&p->fresh, memory_order_relaxed))
		atomic_store_explicit(&p->fresh, false, memory_order_relaxed);
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

void profile_read(struct profile_lock *p, enum profile_read how, uint64_t n)
{
	struct shard *sh = shard_here(p);

	profile_counted(p);
	add(&sh->v[PC_READS], n);
	if (how < PROFILE_READ_NA)
		add(&sh->v[PC_FAST + how], n);
}

/* A revocation, by this thread: the lock it is acquiring made it. */
static void on_revoked(uint64_t ns)
{
	if (revoked_next)
		revoked_next(ns);
	if (profile_current.lock) {
		profile_current.revocations++;
		profile_current.revocation_ns += ns;
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
static void hold_open(const void *lock, struct profile_lock *p, uint64_t start)
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
	e->seq = atomic_load_explicit(&p->head.seq, memory_order_relaxed);
	e->t0 = start;
	atomic_signal_fence(memory_order_seq_cst);
	e->lock = lock;
}

void profile_write(struct profile_lock *p, const void *lock, uint64_t start, uint64_t n)
{
	add(&shard_here(p)->v[PC_WRITES], n);
	profile_counted(p);
	hold_open(lock, p, start);
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
		uint32_t last, e_seq;

		if (e->lock != lock)
			continue;
		p = e->rec;
		e_seq = e->seq;
		held = profile_clock_ns() - e->t0;
		last = o->n - 1;
		if (i != last)
			*e = o->e[last]; /* a handler now sees the last entry twice: harmless */
		atomic_signal_fence(memory_order_seq_cst);
		o->n = last;
		if (atomic_load_explicit(&p->head.seq, memory_order_relaxed) != e_seq)
			return; /* evicted meanwhile: the record is another life's */
		add(&p->holds, 1);
		add(&p->hold_ns, held);
		raise_max(&p->hold_max, held);
		return;
	}
}

/* ---- fork ---- */

static void fork_prepare(void)
{
	table_lock(&profile_mutex, &fork_saved_mask);
}

static void fork_parent(void)
{
	table_unlock(&profile_mutex, &fork_saved_mask);
}

static void zero_counts(struct profile_lock *p)
{
	size_t head = offsetof(struct profile_lock, read_waits);

	memset((char *)p + head, 0, record_size - head);
}

/* A forked child counts from zero, as the statistics do; its locks keep their records. */
static void fork_child(void)
{
	for (uint32_t i = 0; i <= record_count; i++)
		zero_counts(record_at(i));
	evicted_lives = 0;
	table_unlock(&profile_mutex, &fork_saved_mask);
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
	free_records = map_zeroed((size_t)record_limit * sizeof(*free_records));
	index_slots = map_zeroed(slots * sizeof(struct islot));
	index_scratch = map_zeroed(slots / 2 * sizeof(struct islot));
	index_mask = slots - 1;
	return records && free_records && index_slots && index_scratch;
}

void profile_start(const char *variant, bool bias)
{
	int saved_errno = errno;
	unsigned shards = shards_for_cpus();

	profile_variant = variant;
	profile_bias = bias;
	shard_mask = shards - 1;
	if (__rseq_size > 0)
		rseq_cpu_offset = __rseq_offset + (ptrdiff_t)offsetof(struct rseq, cpu_id_start);
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
		.lock = p->lock, .site = p->site, .generation = p->generation,
		.seq = atomic_load_explicit(&p->head.seq, memory_order_relaxed),
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

/*
 * The rows of the records in use and the evicted row, taken under the
 * mutex (records are reused); the report is made after it, from them.
 */
__attribute__((destructor(LIBBRAVO_DTOR_PROFILE))) static void profile_at_exit(void)
{
	int saved_errno = errno;
	struct profile_row *rows;
	struct profile_summary s = {
		.variant = profile_variant, .limit = record_limit,
		.top = config.profile_top, .sort = (enum profile_sort)config.profile_sort,
		.path = config.profile_file,
	};
	struct table_guard saved;
	size_t rows_bytes;
	uint32_t n;

	if (!profile_on)
		return;
	table_lock(&profile_mutex, &saved);
	n = record_count;
	table_unlock(&profile_mutex, &saved);
	rows_bytes = (size_t)(n ? n : 1) * sizeof(*rows);
	rows = pool_alloc(rows_bytes);
	if (!rows) {
		libbravo_message("no memory for the profile's report: profile dropped");
		errno = saved_errno;
		return;
	}
	table_lock(&profile_mutex, &saved);
	for (uint32_t i = 1; i <= n; i++)
		if (atomic_load_explicit(&record_at(i)->state, memory_order_relaxed) != RECORD_FREE)
			sum_row(record_at(i), &rows[s.records++]);
	sum_row(evicted_record(), &s.evicted);
	s.evicted.bias = profile_bias;
	s.evicted_lives = evicted_lives;
	table_unlock(&profile_mutex, &saved);
	profile_report(rows, &s);
	pool_free(rows, rows_bytes);
	errno = saved_errno;
}
