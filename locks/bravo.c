/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bravo.c - BRAVO's visible readers table, bias enabling and revocation.
 * See bravo.h for the protocol and its invariants.
 */
#include "bravo.h"

#include "cpu.h"
#include "events.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

struct vr_table *_Atomic vr_table;
unsigned bravo_slowdown_n = 9;
enum vr_layout vr_layout = VR_2D;
unsigned vr_ways = VR_WAYS_DEFAULT;
enum bravo_policy bravo_policy = BRAVO_POLICY_ADAPTIVE;
unsigned bravo_payback = 16;
uint64_t bravo_enable_bits = BRAVO_RBIAS;
unsigned long (*bravo_tolerated_slots)(const void *lock);
bool (*bravo_memory_shared)(const void *addr);
_Atomic uint64_t bravo_epoch;

static uint32_t round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (UINT32_C(1) << 30))
		p <<= 1;
	return p;
}

static uint32_t cpus_configured(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (cpus < 1)
		cpus = 1;
	return cpus > (1 << 20) ? 1u << 20 : (uint32_t)cpus;
}

uint32_t vr_table_default_slots(void)
{
	uint32_t cpus = cpus_configured();

	/* 64 slots per CPU keeps collisions rare; the paper used 4096 for 72. */
	return round_up_pow2(cpus * 64u < VR_TABLE_MIN_SLOTS ? VR_TABLE_MIN_SLOTS : cpus * 64u);
}

/* Slots per cell: 2D vr_ways (a power of two, at most VR_WAYS_MAX); 1D one. */
static uint32_t vr_ways_of(enum vr_layout layout)
{
	if (layout != VR_2D || vr_ways <= 1)
		return 1;
	return round_up_pow2(vr_ways > VR_WAYS_MAX ? VR_WAYS_MAX : vr_ways);
}

/* Slots of the table: 2D a row of cells per CPU; 1D as asked. */
static uint32_t vr_slots_needed(uint32_t slots)
{
	if (vr_layout == VR_2D)
		return round_up_pow2(cpus_configured()) * VR_COLUMNS * vr_ways_of(VR_2D);
	if (slots == 0)
		slots = vr_table_default_slots();
	return round_up_pow2(slots < VR_TABLE_MIN_SLOTS ? VR_TABLE_MIN_SLOTS : slots);
}

static void vr_geometry(struct vr_table *t, uint32_t slots, enum vr_layout layout)
{
	uint32_t ways = vr_ways_of(layout), bits = 0;

	while ((UINT32_C(1) << bits) < ways)
		bits++;
	t->mask = slots - 1;
	t->row_mask = slots / VR_COLUMNS / ways - 1;
	t->layout = layout;
	t->way_bits = bits;
	t->row_shift = VR_COLUMN_BITS + bits;
}

bool vr_table_init(uint32_t slots)
{
	struct vr_table *table, *none = NULL;
	uint64_t no_epoch = 0;
	size_t bytes;

	if (atomic_load_explicit(&vr_table, memory_order_acquire))
		return true;
	/* 2D rows are CPUs if the kernel tells us cheaply; else rows per thread. */
	cpu_hint_init(vr_layout == VR_2D);
	/* The time base, before any InhibitUntil can be stored. */
	atomic_compare_exchange_strong_explicit(&bravo_epoch, &no_epoch, bravo_clock() - 1,
						memory_order_relaxed, memory_order_relaxed);
	slots = vr_slots_needed(slots);
	bytes = sizeof(*table) + (size_t)slots * sizeof(vr_slot_t);
	/* mmap: page-aligned (no false sharing with neighbours), no malloc. */
	table = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED)
		return false;
	vr_geometry(table, slots, vr_layout);
	/* Release: the geometry (and zeroed slots) are seen by whoever sees the table. */
	if (!atomic_compare_exchange_strong_explicit(&vr_table, &none, table,
						     memory_order_release,
						     memory_order_acquire))
		munmap(table, bytes);
	return true;
}

uint32_t vr_table_slots(void)
{
	struct vr_table *t = atomic_load_explicit(&vr_table, memory_order_acquire);

	return t ? t->mask + 1 : 0;
}

uint32_t vr_table_rows(void)
{
	struct vr_table *t = atomic_load_explicit(&vr_table, memory_order_acquire);

	return t ? t->row_mask + 1 : 0;
}

uint32_t vr_table_ways(void)
{
	struct vr_table *t = atomic_load_explicit(&vr_table, memory_order_acquire);

	return t ? UINT32_C(1) << t->way_bits : 0;
}

/* A free slot among the `ways` slots of cell, from way `first` on; NULL if none. */
static vr_slot_t *vr_free_in_cell(vr_slot_t *cell, uint32_t ways, uint32_t first)
{
	for (uint32_t i = 0; i < ways; i++) {
		vr_slot_t *s = &cell[(first + i) & (ways - 1)];

		if (!atomic_load_explicit(s, memory_order_relaxed))
			return s;
	}
	return NULL;
}

/*
 * Where a reader whose first slot is taken may publish instead: the other
 * ways of its cell, then the lock's cell in up to VR_SPILL_ROWS
 * neighbouring rows (row ^ 1, row ^ 2, ...: the cells a revocation scans
 * anyway).  A row's ways run out when more reads than ways are preempted
 * inside their critical sections on one CPU (or were, before their
 * threads migrated): 8 of 16 threads on 2 CPUs, often enough.  Relaxed
 * loads only pick a candidate: the caller's CAS claims it, and its
 * seq_cst recheck of the word decides.  Nothing is probed with one way
 * (the paper's 2D layout) or in 1D.
 */
#define VR_SPILL_ROWS 3u

__thread uint64_t vr_way_hint __attribute__((tls_model("initial-exec")));

vr_slot_t *vr_free_way(struct vr_table *t, vr_slot_t *slot)
{
	uint32_t ways = UINT32_C(1) << t->way_bits;
	size_t index = (size_t)(slot - t->slot);
	size_t in_row = index & (((size_t)1 << t->row_shift) - 1);
	size_t row = index >> t->row_shift;
	vr_slot_t *s;

	if (ways == 1)
		return NULL;
	s = vr_free_in_cell(slot - (index & (ways - 1)), ways, (uint32_t)index + 1);
	for (uint32_t r = 1; !s && r <= VR_SPILL_ROWS && r <= t->row_mask; r++) {
		size_t other = (row ^ r) & t->row_mask;

		s = vr_free_in_cell(&t->slot[(other << t->row_shift | in_row) & ~(size_t)(ways - 1)],
				    ways, (uint32_t)index);
	}
	return s;
}

vr_slot_t *vr_next_way(struct vr_table *t, vr_slot_t *slot)
{
	vr_slot_t *s = vr_free_way(t, slot);
	size_t moved = s ? (size_t)(s - t->slot) ^ (size_t)(slot - t->slot) : 0;

	/* In the same cell: next time, try this way first (the hint is relative to the home way). */
	if (moved >> t->way_bits == 0)
		vr_way_hint ^= moved;
	return s;
}

/*
 * Tokens come from a process-wide counter in blocks of 2^16 per thread, so
 * that a program creating many short-lived locks does not bounce one line.
 * 64 bits never wrap; zero is never handed out.
 */
static _Atomic uint64_t token_blocks;
static __thread uint64_t token_next __attribute__((tls_model("initial-exec")));
static __thread uint64_t token_end __attribute__((tls_model("initial-exec")));

static uint64_t token_new(void)
{
	if (token_next == token_end) {
		token_next = (atomic_fetch_add_explicit(&token_blocks, 1, memory_order_relaxed) + 1) << 16;
		token_end = token_next + (UINT64_C(1) << 16);
	}
	/*
	 * Odd multiplier: a bijection, so tokens stay distinct and non-zero,
	 * and their top bits (the column, vr_column_of) are well spread.
	 */
	return token_next++ * BRAVO_HASH_MUL;
}

static size_t per_lock_table_bytes(void)
{
	return sizeof(struct vr_table) + (size_t)vr_table_slots() * sizeof(vr_slot_t);
}

/*
 * VR_PER_LOCK: a table of the lock's own (bravo_table_for), named with a
 * column as tokens are; 0: no memory.  A table is not unmapped when its
 * lock is re-initialized (the benchmarks that use it make their locks once).
 */
static uint64_t token_new_per_lock(void)
{
	struct vr_table *t = mmap(NULL, per_lock_table_bytes(), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (t == MAP_FAILED || ((uintptr_t)t & ~VR_PER_LOCK_ADDR_MASK))
		return 0; /* (an address above 2^56 is not mapped without a hint) */
	vr_geometry(t, vr_table_slots(), VR_1D);
	return (uint64_t)(uintptr_t)t | (token_new() & ~VR_PER_LOCK_ADDR_MASK);
}

/*
 * A lock in shared memory: no bias for its life (bravo_memory_shared).
 * The strikes at their maximum keep its slow readers from asking often.
 */
static void bravo_no_bias(struct bravo *b)
{
	uint64_t none = 0, w = atomic_load_explicit(&b->word, memory_order_relaxed);

	atomic_compare_exchange_strong_explicit(&b->token, &none, BRAVO_TOKEN_NO_BIAS,
						memory_order_relaxed, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&b->word, &w,
						      w | BRAVO_STRIKE_MAX << BRAVO_STRIKE_SHIFT,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/*
 * A lock's first token in a life costs its page check (bravo_memory_shared:
 * three system calls, about 5 us), the price of hundreds of fast reads; a
 * lock that never makes them pays it for nothing: a short-lived lock (made,
 * read, written, freed: a std::shared_mutex per request) every life, 75
 * times glibc's cost of a lock's life, and a program with a million locks
 * each read now and then 5 us a lock (50 times glibc's time in a
 * one-second run over 2^20 locks).  Ski rental, in reads: once the process
 * has drawn BRAVO_RENT_AFTER tokens (it makes locks by the hundred
 * thousand, or churns them), the adaptive policy lets a fresh lock's first
 * try only start the rent: BRAVO_RENT_STRIKES strikes, so that a slow
 * reader tries to enable its bias on one slow read in 4^6 = 4096 only
 * (bravo_enable_due), and an InhibitUntil as long as a page check takes
 * (the fastest seen), which marks the rent as started.  The try that comes
 * due draws the token (the purchase) and clears the rent's strikes: the
 * lock starts as a young process's would.  A lock read slowly 4096 times
 * can have lost a check's cost to the slow path (if its reads contend);
 * one read less often never pays for it.  Before the threshold, as
 * in the paper, the first slow read draws, so a program with fewer locks
 * sees the first read of each lock bias it, and a benchmark's warm-up read
 * (bench/common.h, bench_lock_init_warm) still takes the check out of its
 * measured interval (results/README.md, "Lock churn").
 */
#define BRAVO_RENT_AFTER 65536u
#define BRAVO_RENT_STRIKES UINT64_C(6)

static _Atomic uint64_t check_cost = UINT64_MAX; /* bravo_now() units; MAX: not timed */
static _Atomic uint64_t tokens_drawn;

static bool fresh_rent_paid(struct bravo *b)
{
	uint64_t keep = (UINT64_C(1) << BRAVO_TIME_SHIFT) - 1;
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);
	uint64_t cost = atomic_load_explicit(&check_cost, memory_order_relaxed);
	uint64_t until;

	/* Set and passed (the caller found the lock not inhibited): paid. */
	if (bravo_policy != BRAVO_POLICY_ADAPTIVE || cost == UINT64_MAX || w >> BRAVO_TIME_SHIFT ||
	    atomic_load_explicit(&tokens_drawn, memory_order_relaxed) < BRAVO_RENT_AFTER)
		return true;
	/* The shift keeps the 44-bit modular time, as bravo_inhibit's does (a 0 only rents again). */
	until = (w & keep & ~(BRAVO_STRIKE_MAX << BRAVO_STRIKE_SHIFT)) |
		BRAVO_RENT_STRIKES << BRAVO_STRIKE_SHIFT | (bravo_now() + cost) << BRAVO_TIME_SHIFT;
	/* Relaxed: the time field only filters; losing the race leaves the rent to the winner. */
	atomic_compare_exchange_strong_explicit(&b->word, &w, until, memory_order_relaxed,
						memory_order_relaxed);
	return false;
}

/* The page check, timed for fresh_rent_paid. */
static bool memory_shared_timed(struct bravo *b, bool (*shared)(const void *))
{
	uint64_t t0 = bravo_now();
	bool answer = shared(b);
	uint64_t took = bravo_now() - t0;
	uint64_t best = atomic_load_explicit(&check_cost, memory_order_relaxed);

	atomic_fetch_add_explicit(&tokens_drawn, 1, memory_order_relaxed);
	while (took < best && !atomic_compare_exchange_weak_explicit(&check_cost, &best, took,
								     memory_order_relaxed,
								     memory_order_relaxed))
		;
	return answer;
}

/*
 * The lock's token, drawn now if it has none (racing slow readers agree);
 * false if it has none (a fresh lock's rent not yet paid, shared memory,
 * no memory for a per-lock table).  The CAS orders a per-lock table's
 * set-up before its address (and RBias after it).
 */
static bool bravo_token_ensure(struct bravo *b, enum vr_scope scope)
{
	uint64_t t = atomic_load_explicit(&b->token, memory_order_relaxed), mine;
	bool (*shared)(const void *) = bravo_memory_shared;

	if (t)
		return t != BRAVO_TOKEN_NO_BIAS;
	if (shared && !fresh_rent_paid(b))
		return false;
	if (shared && memory_shared_timed(b, shared)) {
		bravo_no_bias(b);
		return false;
	}
	mine = scope == VR_PER_LOCK ? token_new_per_lock() : token_new();
	if (!mine)
		return false;
	if (!atomic_compare_exchange_strong_explicit(&b->token, &t, mine,
						     memory_order_release, memory_order_relaxed)) {
		if (scope == VR_PER_LOCK)
			munmap(bravo_table_for(scope, mine), per_lock_table_bytes());
		return t != BRAVO_TOKEN_NO_BIAS;
	}
	return true;
}

static void count_event(enum lock_event ev, uint64_t n)
{
	void (*count)(enum lock_event, uint64_t) = lock_event_count;

	if (count)
		count(ev, n);
}

__thread unsigned bravo_unpaid_reads __attribute__((tls_model("initial-exec")));

vr_slot_t *bravo_read_fast_first(struct bravo *b, vr_slot_t *slot)
{
	/* seq_cst: as the recheck it replaces (the Dekker pair, bravo.h). */
	uint64_t w = atomic_load_explicit(&b->word, memory_order_seq_cst);

	if ((w & (BRAVO_RBIAS | BRAVO_WAITERS_MASK)) != BRAVO_RBIAS)
		goto back_out;
	if (!(w & BRAVO_USED)) {
		/* First fast reader since bias was enabled: tell writers to scan. */
		w = atomic_fetch_or_explicit(&b->word, BRAVO_USED, memory_order_seq_cst);
		if ((w & (BRAVO_RBIAS | BRAVO_WAITERS_MASK)) != BRAVO_RBIAS)
			goto back_out;
	}
	if (w & BRAVO_UNPAID)
		bravo_read_sample_unpaid(b);
	return slot;
back_out:
	/*
	 * Relaxed: we never entered, so nothing needs to be ordered before
	 * the clear; a writer that still reads our slot only waits longer.
	 */
	atomic_store_explicit(slot, NULL, memory_order_relaxed);
	return NULL;
}

__thread unsigned bravo_enable_tries __attribute__((tls_model("initial-exec")));

void bravo_enable_slowpath(struct bravo *b, enum vr_scope scope, uint64_t w)
{
	uint64_t keep = (UINT64_C(1) << BRAVO_TIME_SHIFT) - 1;
	uint64_t bits = bravo_enable_bits | (bravo_policy == BRAVO_POLICY_ADAPTIVE ? BRAVO_UNPAID : 0);
	bool fresh = atomic_load_explicit(&b->token, memory_order_relaxed) == 0;

	if (!vr_table_init(0))
		return;
	cpu_row_assign();
	/* Ordered before RBias by the release CAS below. */
	if (!bravo_token_ensure(b, scope))
		return;
	/* The purchase: the rent's strikes were no verdict (fresh_rent_paid). */
	if (fresh)
		keep &= ~(BRAVO_STRIKE_MAX << BRAVO_STRIKE_SHIFT);
	/*
	 * One attempt: losing the race means another reader set it or a writer
	 * arrived.  Release pairs with the fast path's acquire of the word, so
	 * a reader that sees RBias also sees the table.  The time field is
	 * zero while bias is on.
	 */
	if (atomic_compare_exchange_strong_explicit(&b->word, &w, (w & keep) | bits,
						    memory_order_release, memory_order_relaxed))
		count_event(LOCK_EV_BIAS_ENABLED, 1);
}

__thread unsigned bravo_unpaid_trend __attribute__((tls_model("initial-exec")));

/*
 * The adaptive policy's verdict on the bias that `old` (the word before
 * the revocation) shows: a strike if fast reads did not pay for it
 * (UNPAID still set), strikes halved if they did.  The verdict also moves
 * the revoking thread's trend (bravo.h, "Policy"): up one for a bias
 * that did not pay, down one for one that did.  While the trend is at
 * BRAVO_TREND_ON or more, a bias that did not pay gives its lock at least
 * BRAVO_TREND_STRIKES strikes: what this thread's other locks taught
 * carries over to a lock still learning.
 */
static uint64_t adaptive_strikes(uint64_t old)
{
	uint64_t strikes = old >> BRAVO_STRIKE_SHIFT & BRAVO_STRIKE_MAX;
	unsigned trend = bravo_unpaid_trend;

	if (!(old & BRAVO_RBIAS))
		return strikes; /* ending a drain: no new verdict */
	if (old & BRAVO_UNPAID) {
		count_event(LOCK_EV_POLICY_STRIKE, 1);
		if (trend < BRAVO_TREND_MAX)
			bravo_unpaid_trend = ++trend;
		if (strikes < BRAVO_STRIKE_MAX)
			strikes++;
		if (trend >= BRAVO_TREND_ON && strikes < BRAVO_TREND_STRIKES)
			strikes = BRAVO_TREND_STRIKES;
		return strikes;
	}
	if (trend)
		bravo_unpaid_trend = trend - 1;
	if (strikes)
		count_event(LOCK_EV_POLICY_PAID, 1);
	return strikes >> 1;
}

/* After a revocation: InhibitUntil, and the policy's strikes. */
static void bravo_inhibit(struct bravo *b, uint64_t start, uint64_t old)
{
	uint64_t now = bravo_now(), took = now - start;
	/* Clamp: a window past half the 44-bit span would read as the past. */
	uint64_t cap = UINT64_C(1) << 42;
	uint64_t window = took && bravo_slowdown_n > cap / took ? cap : took * bravo_slowdown_n;
	uint64_t strikes = old >> BRAVO_STRIKE_SHIFT & BRAVO_STRIKE_MAX;
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);
	uint64_t until;

	if (bravo_policy == BRAVO_POLICY_ADAPTIVE)
		strikes = adaptive_strikes(old);
	until = now + window;
	/*
	 * The table is clear of the lock: any drain is over.  CAS loop:
	 * waiting writers may change the count bits meanwhile, and a fast
	 * reader that lost the race may still set USED: clear it.
	 */
	while (!atomic_compare_exchange_weak_explicit(&b->word, &w,
						      (w & BRAVO_WAITERS_MASK) |
						      strikes << BRAVO_STRIKE_SHIFT |
						      until << BRAVO_TIME_SHIFT,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static const void *token_of(struct bravo *b)
{
	return (const void *)(uintptr_t)atomic_load_explicit(&b->token, memory_order_relaxed);
}

static unsigned long tolerated(const void *lock)
{
	unsigned long (*hook)(const void *) = bravo_tolerated_slots;

	return hook ? hook(lock) : 0;
}

/*
 * The slots a reader of token may be in: its cell in every row (2D), or
 * all of them (1D): n runs of `ways` contiguous slots, stride apart.
 */
struct vr_scan {
	vr_slot_t *first;
	size_t stride;
	uint32_t ways;
	uint32_t n;
};

static struct vr_scan vr_scan_of(struct vr_table *t, const void *token)
{
	struct vr_scan sc = { t->slot, 1, 1, t->mask + 1 };

	if (t->layout == VR_2D) {
		sc.ways = UINT32_C(1) << t->way_bits;
		sc.first = &t->slot[(size_t)vr_column_of((uint64_t)(uintptr_t)token) * sc.ways];
		sc.stride = (size_t)VR_COLUMNS * sc.ways;
		sc.n = t->row_mask + 1;
	}
	return sc;
}

static inline vr_slot_t *vr_scan_slot(const struct vr_scan *sc, uint32_t i, uint32_t way)
{
	return &sc->first[i * sc->stride + way];
}

/* Slots holding token, counting no further than limit + 1. */
static unsigned long vr_count(struct vr_table *t, const void *token, unsigned long limit)
{
	struct vr_scan sc = vr_scan_of(t, token);
	unsigned long n = 0;

	for (uint32_t i = 0; i < sc.n && n <= limit; i++)
		for (uint32_t way = 0; way < sc.ways; way++)
			/* seq_cst: ordered after the RBias clear (Dekker, see bravo.h). */
			if (atomic_load_explicit(vr_scan_slot(&sc, i, way), memory_order_seq_cst) == token)
				n++;
	return n;
}

/* Statistics: a revocation or a drain read the lock's slots once more. */
static void count_scan(struct vr_table *t, const void *token)
{
	if (lock_event_count) {
		struct vr_scan sc = vr_scan_of(t, token);

		count_event(LOCK_EV_SLOTS_SCANNED, (uint64_t)sc.n * sc.ways);
	}
}

/* True while more than `tolerate` slots hold token. */
static bool vr_holds(struct vr_table *t, const void *token, unsigned long tolerate)
{
	return token && vr_count(t, token, tolerate) > tolerate;
}

/*
 * One step of waiting for readers that cannot wake us (a fast reader's
 * unlock is a plain store): spin (while it can pay: fewer readers inside
 * than CPUs, and the process not oversubscribed), then yield a few
 * times, then sleep with a doubling interval up to 1 ms, so a writer
 * behind a long-held read lock costs about a thousand short wake-ups a
 * second, not a CPU.
 */
struct backoff {
	unsigned step;
	unsigned spin; /* spins before the first yield: 0 once they cannot pay */
};

static int backoff_wait(struct backoff *bo, const struct deadline *dl)
{
	unsigned step = bo->step++;

	/*
	 * The first wait: no spin either while the process's threads
	 * outnumber its CPUs (wait.h, wait_oversubscribed): a reader inside
	 * may be waiting for a CPU.  Asked here, not before the scan, so a
	 * revocation that finds the table clear costs no clock read.
	 */
	if (step == 0 && bo->spin && wait_oversubscribed())
		bo->spin = 0;
	if (step < bo->spin) {
		cpu_relax();
		return 0;
	}
	if (deadline_passed(dl))
		return ETIMEDOUT;
	step -= bo->spin; /* the spin phase: done, or skipped */
	if (step < 4) {
		wait_yield();
		return 0;
	}
	step -= 4;
	wait_sleep_ns(step < 6 ? UINT64_C(16000) << step : UINT64_C(1000000), dl);
	return 0;
}

/* Wait until at most `tolerate` slots hold token. */
static int vr_wait_for_readers(struct vr_table *t, const void *token, const struct deadline *dl,
			       unsigned long tolerate)
{
	/*
	 * Spin only while it can pay (wait.h, wait_spin_pays): while the fast
	 * readers inside could all be running beside this writer.  With as
	 * many as the CPUs, one of them is preempted and the wait lasts until
	 * it runs again: yield at once instead of burning its time slice.
	 */
	unsigned long inside = vr_count(t, token, wait_cpus()); /* stops past the CPUs */
	struct backoff bo = { 0, wait_spin_pays((uint32_t)inside) ? wait_spin_budget : 0 };
	int r;

	if (tolerate == 0) {
		/* The common case: wait on each of the lock's slots in turn. */
		struct vr_scan sc = vr_scan_of(t, token);

		for (uint32_t i = 0; i < sc.n; i++)
			for (uint32_t way = 0; way < sc.ways; way++)
				while (atomic_load_explicit(vr_scan_slot(&sc, i, way),
							    memory_order_seq_cst) == token)
					if ((r = backoff_wait(&bo, dl)))
						return r;
		count_event(LOCK_EV_SLOTS_SCANNED, (uint64_t)sc.n * sc.ways);
	} else {
		while (count_scan(t, token), vr_holds(t, token, tolerate))
			if ((r = backoff_wait(&bo, dl)))
				return r;
	}
	/*
	 * Acquire: pairs with the release store of each reader's unlock that
	 * we saw, so their critical sections happen before ours.
	 */
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

static void revoked_event(uint64_t t0)
{
	void (*revoked)(uint64_t) = lock_event_revoked;

	if (revoked)
		revoked(lock_event_clock_ns() - t0);
}

int bravo_revoke(struct bravo *b, enum vr_scope scope, const void *lock,
		 const struct deadline *dl, enum bravo_wait how, uint64_t *start)
{
	uint64_t t0 = lock_event_revoked ? lock_event_clock_ns() : 0;
	uint64_t old = atomic_load_explicit(&b->word, memory_order_relaxed);
	struct vr_table *t = bravo_table_of(b, scope);
	const void *token = token_of(b);
	bool cleared = false;
	unsigned long tolerate;
	int r = 0;

	if (*start == 0)
		*start = bravo_now();
	if (old & BRAVO_RBIAS) {
		/* seq_cst RMW: the Dekker pair with bravo_read_fast (see bravo.h). */
		old = atomic_fetch_and_explicit(&b->word, ~(BRAVO_RBIAS | BRAVO_USED),
						memory_order_seq_cst);
		cleared = true;
		if (!(old & (BRAVO_USED | BRAVO_DRAINING))) {
			/* No reader took the fast path: nothing to wait for. */
			count_event(LOCK_EV_REVOKE_NO_SCAN, 1);
			bravo_inhibit(b, *start, old);
			revoked_event(t0);
			return 0;
		}
	}
	tolerate = tolerated(lock);
	if (!t || !token)
		goto clear;
	count_scan(t, token);
	if (!vr_holds(t, token, tolerate))
		goto clear;
	switch (how) {
	case BRAVO_RELEASE:
		atomic_fetch_or_explicit(&b->word, BRAVO_DRAINING, memory_order_relaxed);
		return EAGAIN;
	case BRAVO_NOWAIT:
		r = EBUSY;
		break;
	case BRAVO_HOLD:
		r = vr_wait_for_readers(t, token, dl, tolerate);
		break;
	}
	if (r) {
		/*
		 * Fast readers are still in the table and the caller is about to
		 * release the underlying lock: set RBias again, so the next writer
		 * revokes (and scans) too.  We still hold write permission, the
		 * only state in which RBias may change hands.  Release (no
		 * store-load order needed): readers that see RBias set need
		 * only the table, published long before.
		 */
		if (cleared)
			atomic_fetch_or_explicit(&b->word, BRAVO_RBIAS | BRAVO_USED,
						 memory_order_release);
		return r;
	}
clear:
	/* The table is clear of the lock: end any drain, inhibit bias. */
	atomic_thread_fence(memory_order_acquire);
	bravo_inhibit(b, *start, old);
	revoked_event(t0);
	return 0;
}

int bravo_drain_wait(struct bravo *b, enum vr_scope scope, const void *lock,
		     const struct deadline *dl)
{
	struct vr_table *t = bravo_table_of(b, scope);

	return t ? vr_wait_for_readers(t, token_of(b), dl, tolerated(lock)) : 0;
}

unsigned long bravo_fast_readers(struct bravo *b, enum vr_scope scope)
{
	struct vr_table *t = bravo_table_of(b, scope);
	const void *token = token_of(b);

	return t && token ? vr_count(t, token, ULONG_MAX - 1) : 0;
}

bool bravo_has_fast_readers(struct bravo *b, enum vr_scope scope, const void *lock)
{
	struct vr_table *t = bravo_table_of(b, scope);

	/* Without USED no reader entered through the table since the last scan. */
	if (!t || !(atomic_load_explicit(&b->word, memory_order_acquire) & (BRAVO_USED | BRAVO_DRAINING)))
		return false;
	return vr_holds(t, token_of(b), tolerated(lock));
}

enum bravo_miss bravo_miss_cause(struct bravo *b, enum vr_scope scope, uint64_t w)
{
	struct vr_table *t = bravo_table_of(b, scope);
	vr_slot_t *slot;

	if (w & BRAVO_WAITERS_MASK)
		return BRAVO_MISS_WRITER_WAITING;
	if (!(w & BRAVO_RBIAS))
		return bravo_inhibited(w, bravo_now()) ? BRAVO_MISS_INHIBITED : BRAVO_MISS_BIAS_OFF;
	/*
	 * Bias was on: either every way of our cell was taken (by readers of
	 * this lock or of others: a collision), or a writer got between.
	 */
	if (!t)
		return BRAVO_MISS_LOST_RACE;
	slot = vr_slot_of(t, (uint64_t)(uintptr_t)token_of(b));
	if (atomic_load_explicit(slot, memory_order_relaxed) && !vr_free_way(t, slot))
		return BRAVO_MISS_COLLISION;
	return BRAVO_MISS_LOST_RACE;
}
