/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bravo.h - BRAVO, biased locking for reader-writer locks.
 *
 * D. Dice and A. Kogan, "BRAVO: Biased Locking for Reader-Writer Locks",
 * USENIX ATC 2019, Listing 1.  One generic wrapper over any underlying lock
 * that provides struct rw_ops; libbravo composes it over BA (BRAVO-BA) and
 * over glibc's rwlock (BRAVO-pthread).
 *
 * The lock adds one 64-bit word to the underlying lock (the paper keeps
 * RBias and InhibitUntil apart and notes they fold into one field):
 *
 *   bit  0       BRAVO_RBIAS   readers may use the visible readers table
 *   bit  1       BRAVO_USED    a reader took the fast path since bias was
 *                              last revoked (else revocation skips the scan)
 *   bit  2       BRAVO_DRAINING a writer revoked bias and let go of the
 *                              underlying lock while fast readers drain
 *   bits 3..14   writers waiting (only for writer-preferring locks)
 *   bit  15      BRAVO_FULL_PATH set with RBias when the caller wants every
 *                read on its full path (bravo_read_fast's `inline_path`)
 *   bits 16..18  strikes of the adaptive policy: revocations in a row
 *                that bias did not pay for (see "Policy" below)
 *   bit  19      BRAVO_UNPAID  set with RBias by the adaptive policy;
 *                cleared once fast reads have paid for the bias
 *   bits 20..63  a 44-bit modular time in bravo_now() units: while RBias
 *                is clear, InhibitUntil; while it is set, zero
 *
 * Beside the word, a 64-bit token names the lock instance in the table:
 * readers publish the token, not the lock's address.  It is drawn from a
 * process-wide counter by the reader that first enables bias, and is zero
 * in a zero-filled or re-initialized lock, so a slot left behind by a
 * reader that can no longer release it (a thread that exited holding a
 * read lock, or a thread that does not exist in a forked child) never
 * matches the lock's next life: zeroing or re-initializing a lock makes
 * it fresh, as it does glibc's.  A lock in memory shared with another
 * process gets BRAVO_TOKEN_NO_BIAS instead, and never bias (see
 * bravo_memory_shared).
 *
 * All-zero is "no bias, not inhibited": the first slow-path reader enables
 * bias, so a zero-filled lock is valid.
 *
 * Invariants:
 *  - RBias is set only by a reader holding read permission on the
 *    underlying lock, and cleared only by a writer holding write permission
 *    (which sets it back if it gives up before the table is clear of the
 *    lock).  So writers see it stable while they hold the underlying lock,
 *    and one that finds it clear knows no fast reader holds the lock.
 *  - A fast-path reader holds read permission iff its table slot holds the
 *    lock's token and it saw RBias set (and no waiting writer) after
 *    publishing that slot.
 *  - A writer that found RBias set clears it, then waits until no slot holds
 *    the lock before it enters.  The reader's publish-then-recheck and the
 *    writer's clear-then-scan form a Dekker pair (see bravo_read_fast): each
 *    side's store is ordered before its load by a full fence (a locked RMW
 *    on x86; seq_cst in C11).
 *  - A fast reader enters only after it saw both RBias and USED set (or set
 *    USED itself with an RMW that saw RBias set), after publishing its
 *    slot.  The writer clears both with one RMW; if USED was clear, no
 *    reader can be inside through the table and the scan is skipped.  This
 *    makes a lock that is read once and then written (a short-lived lock, a
 *    write-heavy one) pay one RMW instead of a table scan.
 *  - After a revocation that took time T, slow readers do not re-enable bias
 *    for at least N*T (the slow-down guard), bounding writer slow-down to
 *    1/(N+1).
 *  - Over a reader-preferring lock (glibc's default kind) a writer that has
 *    to wait for fast readers does not hold the underlying lock meanwhile:
 *    it sets DRAINING (which keeps bias off), releases the lock so that
 *    arriving readers get in through it as they would under glibc, waits
 *    for the table to drain, and tries again.  Any writer that takes the
 *    underlying lock while DRAINING is set scans before it enters, and the
 *    one that finds the table clear of the token clears DRAINING.
 *  - A reader's hold that was released on its behalf by another thread (an
 *    unlock by a thread that held nothing; see src/interpose/handoff.h) leaves its
 *    slot behind: writers tolerate as many slots of the lock as there are
 *    such releases outstanding (bravo_tolerated_slots).
 *
 * Memory ordering, in one place (models/bravo.pml checks the protocol under
 * sequential consistency, which these orderings justify):
 *  - reader: seq_cst CAS of its slot, then seq_cst load of the word (or
 *    seq_cst fetch_or of USED); writer: seq_cst fetch_and clearing
 *    RBIAS|USED, then seq_cst loads of the slots.  All four are in C11's
 *    single total order S, so the reader's recheck precedes the writer's
 *    clear in S (and the writer's scan, after the clear, sees the slot), or
 *    follows it (and the reader sees RBias clear).  On x86 the locked
 *    CMPXCHG and LOCK AND are the full fences; the loads are plain MOVs.
 *  - reader unlock: release store of NULL; the writer's scan is followed by
 *    an acquire fence, so a reader's critical section happens before the
 *    writer's once the writer has seen its slot empty.
 *  - slow reader enabling bias: release CAS, paired with the fast path's
 *    acquire load of the word, so a fast reader also sees the table.
 *  - every other access to the word is an RMW or a relaxed load whose value
 *    only filters (the pre-check, the writer's RBias test under write
 *    permission, the waiter count).
 *
 * The visible readers table (vr_table) is process-wide, shared by all locks,
 * in one of two layouts chosen at load (BRAVO_TABLE):
 *  - 2D (default; the paper's preferred embodiment, from its section 7,
 *    with ways): one row per CPU, a row a run of cells, a cell
 *    vr_ways contiguous slots (BRAVO_TABLE_WAYS, 8 by default: 64 bytes,
 *    one cache line).  A reader publishes in its CPU's row, in the cell
 *    its lock's token hashes to, at the lock's home way (vr_slot_of) or,
 *    if that way is taken, at another free way of the same cell, or of
 *    the lock's cell in a neighbouring row (vr_free_way, the full path
 *    only).  Revocation scans only the lock's
 *    cell in each row: as many cache lines as there are CPUs, however
 *    many threads there are.  Readers on different CPUs never share a
 *    line.  The ways are for threads that share a CPU: with more threads
 *    than CPUs, a thread preempted inside a fast read keeps its slot for
 *    a whole time slice, and with one slot per CPU (vr_ways = 1, the
 *    paper's 2D layout) every other reader of the lock on that CPU then
 *    took the slow path (at 16 threads on 2 CPUs, 47% of reads did).
 *  - 1D (the paper's evaluated design): one array, the slot hashed from
 *    the lock and the thread; revocation scans every slot.
 * Either way the slot travels to the unlock in the held-lock list (a
 * reader may migrate), and a thread reading a lock it already reads
 * through the table finds its own slot taken and takes another way (2D),
 * or another CPU's row (2D), or the slow path (1D): two holds, two
 * unlocks, both correct.
 * Which table a lock publishes in is its caller's choice (enum vr_scope,
 * passed to every BRAVO function): the process-wide one for every installed
 * variant, or, for the benchmark-only "ideal" BRAVO-BA of the paper's
 * figure 1, a 1D table per lock (see bravo_table_for).
 *
 * Policy (BRAVO_POLICY; enum bravo_policy): when may bias come back?
 *  - classic: the paper's rule, InhibitUntil = now + N*T.
 *  - adaptive (default): the same window, and bias must pay for itself in fast
 *    reads.  Each bias flip costs the enabling CAS, a revocation (a
 *    column scan that pulls other CPUs' rows) and two clock reads; a fast
 *    read saves little unless readers share the lock.  So the adaptive
 *    enabler sets BRAVO_UNPAID with RBias; fast readers sample themselves
 *    (one in BRAVO_PAYBACK per thread, thread-locally counted) and the
 *    sampled one clears it.  A revocation that finds UNPAID still set
 *    -- bias served fewer than about BRAVO_PAYBACK fast reads -- counts a
 *    strike, one that finds it clear halves the strikes.  With s strikes
 *    a slow reader tries to enable bias on one of its slow reads in 4^s
 *    only (thread-locally counted, no shared write).  The yardstick is
 *    reads, not time: a lock among thousands, visited once in a while,
 *    is judged by what happens between its own writes, however long
 *    that takes.  A lock whose reads run between writes in long streaks
 *    keeps the classic behaviour; one written every few reads stops
 *    flipping.  Every fast reader samples, the inline path's included
 *    (bravo_read_sample_unpaid: nothing once bias is paid -- the recheck
 *    tests UNPAID with the other bits -- and a thread-local count while
 *    it is not), so the fast reads of an unpaid bias, most fast reads at
 *    10% writes, cost no more than a paid one's.
 *    Each lock learns alone, and learning costs a flip per strike: with
 *    thousands of locks written every few reads, the policy spent its
 *    flips learning (16 a lock in the first 0.3 s at 10% writes over 4096
 *    locks).  So a revoking thread also keeps a trend, its unpaid
 *    verdicts less its paid ones (saturating at 1024); while it is 512 or
 *    more, an unpaid verdict gives the lock at least 5 strikes at once.
 *    The trend moves only where biases fail far more often than they pay:
 *    at 1% and 3% writes (14% and 33% of verdicts unpaid) it stays near
 *    zero; at 10% (64%) it passes 512 within milliseconds.
 *    Strikes only delay enabling: the 1/(N+1) bound holds for both.
 *    Once the process has drawn BRAVO_RENT_AFTER tokens, a fresh lock's
 *    first token (its page check) is bought on ski-rental terms, the
 *    rent counted in slow reads: see fresh_rent_paid in bravo.c.
 */
#ifndef LIBBRAVO_BRAVO_H
#define LIBBRAVO_BRAVO_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cpu.h"
#include "hidden.h"
#include "wait.h"

#define BRAVO_RBIAS        UINT64_C(0x1)
#define BRAVO_USED         UINT64_C(0x2)
#define BRAVO_DRAINING     UINT64_C(0x4)
#define BRAVO_WAITER       UINT64_C(0x8)
#define BRAVO_WAITERS_MASK UINT64_C(0x7ff8)
#define BRAVO_FULL_PATH    UINT64_C(0x8000)
#define BRAVO_STRIKE_SHIFT 16
#define BRAVO_STRIKE_MAX   UINT64_C(7)
#define BRAVO_UNPAID       UINT64_C(0x80000)
#define BRAVO_TIME_SHIFT   20

#define VR_TABLE_MIN_SLOTS 4096u
/* Cells per row (1D: slots per row): at least 2 KiB, so rows never share a line. */
#define VR_COLUMN_BITS 8
#define VR_COLUMNS (1u << VR_COLUMN_BITS)
/* Slots per cell of a 2D row (BRAVO_TABLE_WAYS): the default, and the most. */
#define VR_WAYS_DEFAULT 8u
#define VR_WAYS_MAX 64u

enum vr_layout { VR_2D, VR_1D };
/*
 * Where a lock's fast readers publish, fixed per caller (a compile-time
 * constant at the inline call sites, so the fast path pays nothing for the
 * choice).  VR_SHARED is 0, so a zero-filled struct rw_ops means it.
 */
enum vr_scope {
	VR_SHARED,   /* the process-wide vr_table */
	VR_PER_LOCK, /* a 1D table of the lock's own, named by its token */
};
enum bravo_policy { BRAVO_POLICY_ADAPTIVE, BRAVO_POLICY_CLASSIC };

struct bravo {
	_Atomic uint64_t token; /* the instance's name in the table; 0: none yet */
	_Atomic uint64_t word;
};

typedef _Atomic(const void *) vr_slot_t;

/*
 * The visible readers table: rows of VR_COLUMNS cells of 2^way_bits
 * slots, each slot 0 or the token of a lock one fast-path reader holds.
 * 2D: a row per CPU (rows rounded up to a power of two); 1D: one slot per
 * cell, slots / VR_COLUMNS rows, a thread picking one at random.  The
 * geometry lives in the same block as the slots, so one acquire of the
 * pointer publishes both; it sits on its own 128-byte sector, read-only
 * once published.
 */
struct vr_table {
	uint32_t mask;      /* slots - 1 */
	uint32_t row_mask;  /* rows - 1 */
	uint32_t layout;    /* enum vr_layout */
	uint32_t way_bits;  /* log2 of the slots per cell (0 in 1D) */
	uint32_t row_shift; /* VR_COLUMN_BITS + way_bits: a row's first slot */
	char pad[128 - 5 * sizeof(uint32_t)];
	vr_slot_t slot[];
};

extern struct vr_table *_Atomic vr_table LIBBRAVO_HIDDEN;
/* Slow-down guard N (BRAVO_N). */
extern unsigned bravo_slowdown_n LIBBRAVO_HIDDEN;
/* Table layout and bias policy, set before the table is made (BRAVO_TABLE, BRAVO_POLICY). */
extern enum vr_layout vr_layout LIBBRAVO_HIDDEN;
/* Slots per cell of a 2D table, a power of two up to VR_WAYS_MAX (BRAVO_TABLE_WAYS). */
extern unsigned vr_ways LIBBRAVO_HIDDEN;
extern enum bravo_policy bravo_policy LIBBRAVO_HIDDEN;
/* Adaptive policy: fast reads that pay for one bias flip, sampled one in this many (BRAVO_PAYBACK). */
extern unsigned bravo_payback LIBBRAVO_HIDDEN;
/*
 * What a slow reader sets to enable bias: RBIAS, plus BRAVO_FULL_PATH if
 * the caller's inline fast path must stay shut (set before any lock use).
 */
extern uint64_t bravo_enable_bits LIBBRAVO_HIDDEN;

/*
 * How many of lock's table slots a writer may leave behind: holds that
 * another thread released on their readers' behalf.  NULL: none.
 */
extern unsigned long (*bravo_tolerated_slots)(const void *lock) LIBBRAVO_HIDDEN;

/*
 * Is the memory at addr shared with other processes (NULL: never)?  A
 * lock there never gets bias: its fast readers would publish in this
 * process's table, which another process's writer cannot scan.  Asked
 * once per lock life, when its token would be drawn: the lock is then
 * given BRAVO_TOKEN_NO_BIAS instead, and its strikes at their maximum, so
 * that its slow readers rarely look again.
 */
extern bool (*bravo_memory_shared)(const void *addr) LIBBRAVO_HIDDEN;
/* Never drawn (tokens are multiples of an odd constant by counters far below it). */
#define BRAVO_TOKEN_NO_BIAS UINT64_C(1)

/*
 * Allocate the table once (idempotent, thread-safe), in layout vr_layout.
 * 1D: slots rounded up to a power of two, never below VR_TABLE_MIN_SLOTS
 * (0: the default size from the number of CPUs).  2D: one row of
 * VR_COLUMNS per configured CPU, rounded up to a power of two (slots is
 * not used).  Returns false if no memory could be had (bias then simply
 * stays off).
 */
bool vr_table_init(uint32_t slots);
uint32_t vr_table_default_slots(void);
uint32_t vr_table_slots(void);
/* Rows of VR_COLUMNS cells in the table (0 before it is made). */
uint32_t vr_table_rows(void);
/* Slots per cell (1 in 1D; 0 before the table is made). */
uint32_t vr_table_ways(void);

/* VR_PER_LOCK: the bits of a token that hold its table's address. */
#define VR_PER_LOCK_ADDR_MASK ((UINT64_C(1) << (64 - VR_COLUMN_BITS)) - 1)

/*
 * The table a reader of token publishes in.  VR_SHARED: the process-wide
 * one.  VR_PER_LOCK (the benchmark-only bravo-ba-private: the "ideal"
 * BRAVO-BA that the paper's figure 1 divides by, never installed): the
 * lock's own 1D table, mapped when its bias is first enabled; the token is
 * that table's address with a column in its top byte, which a user-space
 * address leaves zero.  Either way the fast path finds its table with the
 * one load it needs anyway (the shared table's pointer, or the token): a
 * per-lock table costs no extra indirection.
 */
static inline struct vr_table *bravo_table_for(enum vr_scope scope, uint64_t token)
{
	if (scope == VR_PER_LOCK)
		return (struct vr_table *)(uintptr_t)(token & VR_PER_LOCK_ADDR_MASK);
	return atomic_load_explicit(&vr_table, memory_order_acquire);
}

/* The table of a lock whose token is drawn (NULL before, when per-lock). */
static inline struct vr_table *bravo_table_of(struct bravo *b, enum vr_scope scope)
{
	return bravo_table_for(scope, atomic_load_explicit(&b->token, memory_order_relaxed));
}

/* Why a reader missed the fast path (reported only when asked for). */
enum bravo_miss {
	BRAVO_MISS_BIAS_OFF,       /* RBias clear, bias may be re-enabled */
	BRAVO_MISS_INHIBITED,      /* RBias clear, inside the slow-down window */
	BRAVO_MISS_WRITER_WAITING, /* a writer-preferring writer waits */
	BRAVO_MISS_COLLISION,      /* every way of the thread's cell was taken */
	BRAVO_MISS_LOST_RACE,      /* RBias was set, but a writer cleared it */
	BRAVO_MISS_KINDS
};

/*
 * The underlying lock, as BRAVO sees it. 0 or ETIMEDOUT from blocking
 * calls.  scope: the table its fast readers publish in.
 */
/*
 * write_lock may leave its thread marked as u's waiting writer (wait.h:
 * BA's ba_write_lock_marking); bravo_write_lock keeps it marked from the
 * underlying lock's acquisition to the end of its revocation either way,
 * and its caller puts the mark back once it has named itself.
 */
struct rw_ops {
	enum vr_scope scope;
	/*
	 * A read of u by the caller may get in as a guest (wait.h): its
	 * thread holds u's writer side while it waits, or a read of u that
	 * this thread waits for has been admitted (ba.h).
	 */
	bool (*guest_ok)(void *u);
	int (*read_lock)(void *u, const struct deadline *dl);
	bool (*read_trylock)(void *u);
	void (*read_unlock)(void *u);
	int (*write_lock)(void *u, const struct deadline *dl);
	bool (*write_trylock)(void *u);
	void (*write_unlock)(void *u);
};

/*
 * Time for InhibitUntil: cheap and monotonic, in units of 256 TSC cycles
 * (about 100 ns) or 256 ns, counted from the process's first use of BRAVO
 * (bravo_epoch, set when the table is made).  The 44-bit field spans
 * weeks and is compared modulo 2^44; a zero field means "not inhibited",
 * so a zero-filled lock always starts with bias allowed.  Only a lock left
 * untouched for over half the span can see its inhibition wrongly extended
 * (bias stays off longer: slower, never wrong).
 */
extern _Atomic uint64_t bravo_epoch LIBBRAVO_HIDDEN;

static inline uint64_t bravo_clock(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc() >> 8; /* invariant TSC */
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) >> 8;
#endif
}

static inline uint64_t bravo_now(void)
{
	return bravo_clock() - atomic_load_explicit(&bravo_epoch, memory_order_relaxed);
}

/* Fibonacci hashing: tokens are a counter times 2^64/phi; their top bits spread. */
#define BRAVO_HASH_MUL UINT64_C(0x9e3779b97f4a7c15)

/*
 * The slot a reader of token tries first, on this CPU now: the row (a
 * CPU, or in 1D the thread's own random row) concatenated with the
 * token's top bits, which name its cell (the column, VR_COLUMN_BITS) and
 * in it the lock's home way (way_bits more).  So a thread reading alone
 * on its CPU uses its lock's home way, and locks that share a cell start
 * on different ways.  In 1D cells are single slots, rows VR_COLUMNS
 * slots apart and as many as the table has, so the slot is a hash of
 * (thread, lock) over the whole table, as in the paper.  The row and the
 * token's top bits come out of one double-width shift left by row_shift
 * (the high word of row:token shifted): a single shld on x86-64, which
 * spares the inline path a load of the geometry, a shift and an or, and
 * shifts the row in place, keeping the token for the CAS.  The inline path
 * pays a load of the header's line and the thread's way offset
 * (vr_way_hint) for the ways.
 */
/*
 * The thread's way offset: where its last full-path read found a free way
 * of a cell, relative to that lock's home way (0 until then, and always
 * in 1D and with one way).  Threads that share a CPU then settle on ways
 * of their own, and a thread preempted inside its read no longer sends
 * the others through the full path (16 read-only threads on 2 CPUs:
 * 0.65x glibc without it, 0.88x with it, in the same rounds).  A full
 * word, so that the inline path xors it straight from thread storage.
 */
extern __thread uint64_t vr_way_hint
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

static inline uint64_t vr_row_and_cell(uint64_t row, uint64_t token, uint32_t row_shift)
{
#ifdef __SIZEOF_INT128__
	/* row_shift is in 1..63, so the mask changes nothing but lets the compiler drop the test for 64. */
	return (uint64_t)((__extension__(unsigned __int128)row << 64 | token) << (row_shift & 63) >> 64);
#else
	return row << row_shift | token >> (64 - row_shift);
#endif
}

static inline vr_slot_t *vr_slot_of(struct vr_table *t, uint64_t token)
{
	return &t->slot[vr_row_and_cell(cpu_hint() & t->row_mask, token, t->row_shift) ^ vr_way_hint];
}

/*
 * Another free slot among those a revocation scans for the lock of slot
 * (its cell, then its cell in a few neighbouring rows), or NULL if every
 * one is taken, or with one way per cell (bravo.c).
 */
vr_slot_t *vr_free_way(struct vr_table *t, vr_slot_t *slot);
/* vr_free_way for a reader about to claim the slot: a free way of its own cell becomes its hint. */
vr_slot_t *vr_next_way(struct vr_table *t, vr_slot_t *slot);

/* Column of token in a 2D table (the slots a revocation scans). */
static inline uint32_t vr_column_of(uint64_t token)
{
	return (uint32_t)(token >> (64 - VR_COLUMN_BITS));
}

/* True while bias may not be re-enabled (modular 44-bit comparison). */
static inline bool bravo_inhibited(uint64_t word, uint64_t now)
{
	uint64_t until = word >> BRAVO_TIME_SHIFT;

	return until != 0 && (int64_t)((until - now) << BRAVO_TIME_SHIFT) > 0;
}

/* A fast reader that found USED not yet set: set it (bravo.c). */
vr_slot_t *bravo_read_fast_first(struct bravo *b, vr_slot_t *slot);

/* Adaptive policy: fast reads this thread made while some lock's bias was unpaid. */
extern __thread unsigned bravo_unpaid_reads
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/*
 * Adaptive policy: this thread's trend, revocations it made of a bias that
 * did not pay less those of one that did, kept in 0..BRAVO_TREND_MAX.
 * At BRAVO_TREND_ON or more (far more biases wasted than paid, over
 * hundreds of verdicts), a lock whose bias did not pay gets at least
 * BRAVO_TREND_STRIKES strikes (bravo.c, adaptive_strikes).
 */
#define BRAVO_TREND_MAX 1024u
#define BRAVO_TREND_ON 512u
#define BRAVO_TREND_STRIKES UINT64_C(5)
extern __thread unsigned bravo_unpaid_trend
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/*
 * The adaptive policy's sample, by a reader inside through the table
 * that saw UNPAID set: one fast read in bravo_payback (per thread,
 * across locks) declares the bias paid.  One shared write per verdict at
 * most: each extra RMW of the word costs the lock's other readers a miss
 * (counting four samples in the word instead of one cost 10-20% at 1%
 * writes over 4096 locks).  Inline and without a call, so that an unpaid
 * bias's fast reads take the same path as a paid one's.  Relaxed: a
 * verdict, ordered with nothing; one that lands on the next bias period
 * only makes that period look paid a little early.
 */
static inline __attribute__((always_inline)) void bravo_read_sample_unpaid(struct bravo *b)
{
	if (++bravo_unpaid_reads < bravo_payback)
		return;
	bravo_unpaid_reads = 0;
	atomic_fetch_and_explicit(&b->word, ~BRAVO_UNPAID, memory_order_relaxed);
}

/*
 * Reader fast path (Listing 1, lines 12-21).  Returns the slot the reader
 * published in, or NULL if it must take the slow path.  scope: the table
 * the lock publishes in.  inline_path: the caller's inline path, which
 * stays shut while BRAVO_FULL_PATH is set and makes no call (the caller
 * then needs no stack frame).
 */
static inline __attribute__((always_inline)) vr_slot_t *
bravo_read_fast(struct bravo *b, enum vr_scope scope, bool inline_path)
{
	uint64_t shut = BRAVO_WAITERS_MASK | (inline_path ? BRAVO_FULL_PATH : 0);
	/* Acquire: seeing RBias implies seeing the table that was set up first. */
	uint64_t w = atomic_load_explicit(&b->word, memory_order_acquire);
	struct vr_table *table;
	vr_slot_t *slot;
	const void *empty = NULL;
	uint64_t token;

	if ((w & (BRAVO_RBIAS | shut)) != BRAVO_RBIAS)
		return NULL;
	/* Relaxed: set before RBias by the enabler, whose release we acquired. */
	token = atomic_load_explicit(&b->token, memory_order_relaxed);
	table = bravo_table_for(scope, token);
	slot = vr_slot_of(table, token);
	/*
	 * The full path often comes right after the inline one failed: test
	 * before the locked CAS, so a busy slot costs a load, not an RMW, and
	 * look for another way of the cell (a thread on this CPU that was
	 * preempted in its read, or this thread's own earlier read).
	 */
	if (!inline_path && atomic_load_explicit(slot, memory_order_relaxed) &&
	    !(slot = vr_next_way(table, slot)))
		return NULL;
	/*
	 * Dekker pair with bravo_revoke(): the seq_cst CAS publishes the slot
	 * before the seq_cst recheck below reads RBias; the writer clears RBias
	 * with a seq_cst RMW before its seq_cst scan.  Either the writer sees
	 * our slot, or we see RBias clear (or a waiting writer) and back out.
	 */
	if (!atomic_compare_exchange_strong_explicit(slot, &empty, (const void *)(uintptr_t)token,
						     memory_order_seq_cst,
						     memory_order_relaxed))
		return NULL; /* collision: slot busy */
	w = atomic_load_explicit(&b->word, memory_order_seq_cst) &
	    (BRAVO_RBIAS | BRAVO_USED | BRAVO_UNPAID | BRAVO_WAITERS_MASK);
	if (__builtin_expect(w == (BRAVO_RBIAS | BRAVO_USED), 1))
		return slot;
	if (w == (BRAVO_RBIAS | BRAVO_USED | BRAVO_UNPAID)) {
		bravo_read_sample_unpaid(b); /* inside, the bias unpaid */
		return slot;
	}
	if (!inline_path)
		return bravo_read_fast_first(b, slot);
	/*
	 * The inline path makes no call: the first fast reader since bias
	 * was set backs out (relaxed: it never entered) and lets the full
	 * path set USED.
	 */
	atomic_store_explicit(slot, NULL, memory_order_relaxed);
	return NULL;
}

/*
 * Why a reader that found the lock word `seen` and then went through the
 * slow path missed the fast path, judged from that word and the thread's
 * slot now (for statistics: a race in between can blur the causes).
 */
enum bravo_miss bravo_miss_cause(struct bravo *b, enum vr_scope scope, uint64_t seen);

static inline void bravo_read_fast_unlock(vr_slot_t *slot)
{
	/* Release: the critical section happens before the writer's scan sees NULL. */
	atomic_store_explicit(slot, NULL, memory_order_release);
}

/* Enable bias for a slow reader that found it allowed in word w (bravo.c). */
void bravo_enable_slowpath(struct bravo *b, enum vr_scope scope, uint64_t w);
/* Slow reads of this thread that looked at a lock with strikes. */
extern __thread unsigned bravo_enable_tries
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/*
 * Would a slow reader that finds the lock word w enable bias now?  Not
 * while bias is on, a drain is under way or a writer-preferring writer
 * waits; with s strikes (adaptive policy), on one slow read in 4^s only
 * (thread-locally counted, no shared write); not inside the slow-down
 * window.  consume: count this read as one of the 4^s (the read that acts
 * on the answer); a caller that only looks leaves the count to the one
 * that acts.
 */
static inline bool bravo_enable_due(uint64_t w, bool consume)
{
	unsigned strikes = w >> BRAVO_STRIKE_SHIFT & BRAVO_STRIKE_MAX;
	unsigned tries;

	if (w & (BRAVO_RBIAS | BRAVO_DRAINING | BRAVO_WAITERS_MASK))
		return false;
	tries = bravo_enable_tries + 1;
	/* 4^s - 1 masks the count: no strikes, an empty mask, always due */
	if (tries & ((1u << 2 * strikes) - 1)) {
		bravo_enable_tries = tries; /* not due: this read is counted either way */
		return false;
	}
	if (consume)
		bravo_enable_tries = tries;
	return !(w >> BRAVO_TIME_SHIFT && bravo_inhibited(w, bravo_now()));
}

/*
 * Slow-path reader holding read permission: maybe re-enable bias (l. 25-26).
 * Inline up to the clock, so that a slow read of an inhibited lock costs
 * a load, a few tests and the clock read, not a call.
 */
static inline void bravo_read_acquired_slow(struct bravo *b, enum vr_scope scope)
{
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);

	if (bravo_enable_due(w, true))
		bravo_enable_slowpath(b, scope, w);
}

/* How a writer that finds fast readers inside waits for them. */
enum bravo_wait {
	BRAVO_NOWAIT,  /* try-lock: give up (EBUSY) */
	BRAVO_HOLD,    /* keep the underlying lock while the table drains */
	BRAVO_RELEASE, /* let go of it meanwhile (reader-preferring locks) */
};

/*
 * Revocation (l. 37-49), by a writer holding write permission on the
 * underlying lock, which found RBias or DRAINING set.  Returns 0: enter.
 * EBUSY (NOWAIT) or ETIMEDOUT (HOLD): give up; RBias is set again if this
 * call cleared it (fast readers remain, so the next writer must scan).
 * EAGAIN (RELEASE): fast readers remain and DRAINING is set; the caller
 * releases the underlying lock, waits in bravo_drain_wait() and retries.
 * *start: when the first revocation of this acquisition began (0: now).
 * In every error case the caller still holds the underlying lock and must
 * release it.
 */
int bravo_revoke(struct bravo *b, enum vr_scope scope, const void *lock,
		 const struct deadline *dl, enum bravo_wait how, uint64_t *start);

/* Wait, holding nothing, until no reader holds lock through the table. */
int bravo_drain_wait(struct bravo *b, enum vr_scope scope, const void *lock,
		     const struct deadline *dl);

static inline int bravo_write_acquired(struct bravo *b, enum vr_scope scope, const void *lock,
				       const struct deadline *dl, enum bravo_wait how,
				       uint64_t *start)
{
	/* Relaxed: RBias and DRAINING change only under the lock we now hold. */
	if (atomic_load_explicit(&b->word, memory_order_relaxed) & (BRAVO_RBIAS | BRAVO_DRAINING))
		return bravo_revoke(b, scope, lock, dl, how, start);
	return 0;
}

/* True if some fast-path reader holds lock (a racy snapshot). */
bool bravo_has_fast_readers(struct bravo *b, enum vr_scope scope, const void *lock);

/* Fast-path holds of the lock in the table (a racy snapshot). */
unsigned long bravo_fast_readers(struct bravo *b, enum vr_scope scope);

/* ---- the generic wrapper: BRAVO over an underlying lock u ---- */

#define BRAVO_INLINE static inline __attribute__((always_inline))

/* What bravo_read_nowait found. */
enum bravo_read_nowait {
	BRAVO_READ_MISS,  /* take bravo_read_lock */
	BRAVO_READ_HELD,  /* read-held through the underlying lock (cookie 0) */
	BRAVO_READ_TABLE, /* bias is on: bravo_read_fast(b, scope, false) */
};

/*
 * A slow-path read that neither waits nor enables bias, for a caller whose
 * inline fast path failed and whose own slow path would cost more.  While
 * bias is off and enabling is not due, the underlying lock's try-lock (a
 * read that is due goes to bravo_read_lock, which counts it toward the
 * policy's 4^s once and enables).  While bias is on, BRAVO_READ_TABLE:
 * the caller takes bravo_read_fast(b, scope, false), which settles out
 * of line what the inline path leaves (the first fast reader since bias
 * came on, which sets USED; a busy slot; the full-path bit), kept apart so that
 * this path makes no call besides the try-lock.  The same rules as the
 * fast path: the try-lock fails while the caller write-holds the lock,
 * and a second success by a reader is a second hold.  Relaxed load: it
 * only picks the path; each path re-reads what it relies on.
 */
BRAVO_INLINE enum bravo_read_nowait bravo_read_nowait(struct bravo *b, void *u,
						      const struct rw_ops *ops)
{
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);

	if (w & BRAVO_RBIAS)
		return BRAVO_READ_TABLE;
	if (bravo_enable_due(w, false) || !ops->read_trylock(u))
		return BRAVO_READ_MISS;
	return BRAVO_READ_HELD;
}

/*
 * The cookie of a guest read: a signal handler's read of the lock whose
 * writer side its own thread holds while it waits (wait.h).  It touches
 * neither the table nor the lock underneath: that writer cannot enter
 * before the handler returns, and no other writer is inside.
 */
#define BRAVO_GUEST UINTPTR_MAX

/*
 * *cookie: the reader's slot (fast path), 0 (slow path) or BRAVO_GUEST,
 * for the unlock.
 */
BRAVO_INLINE int bravo_read_lock(struct bravo *b, void *u, const struct rw_ops *ops,
				 uintptr_t *cookie, const struct deadline *dl)
{
	vr_slot_t *slot = bravo_read_fast(b, ops->scope, false);
	int r;

	if (slot) {
		*cookie = (uintptr_t)slot;
		return 0;
	}
	if (ops->guest_ok(u)) {
		*cookie = BRAVO_GUEST;
		return 0;
	}
	*cookie = 0;
	cpu_row_assign();
	r = ops->read_lock(u, dl);
	if (r == 0)
		bravo_read_acquired_slow(b, ops->scope);
	return r;
}

BRAVO_INLINE bool bravo_read_trylock(struct bravo *b, void *u, const struct rw_ops *ops,
				     uintptr_t *cookie)
{
	vr_slot_t *slot = bravo_read_fast(b, ops->scope, false);

	*cookie = (uintptr_t)slot;
	if (slot)
		return true;
	if (!ops->read_trylock(u)) {
		if (!ops->guest_ok(u))
			return false;
		*cookie = BRAVO_GUEST;
		return true;
	}
	bravo_read_acquired_slow(b, ops->scope);
	return true;
}

BRAVO_INLINE void bravo_read_unlock(void *u, const struct rw_ops *ops, uintptr_t cookie)
{
	if (cookie == BRAVO_GUEST)
		return;
	if (cookie)
		bravo_read_fast_unlock((vr_slot_t *)cookie);
	else
		ops->read_unlock(u);
}

/*
 * writer_pref: the underlying lock admits no new reader while a writer
 * waits (writer preference, or BA's phase-fairness).  A writer that has to
 * wait then also shuts the fast path, or readers would slip in through the
 * table ahead of it.  It counts itself in the word only once the try-lock
 * failed: readers that got in before that arrived before it, and an
 * uncontended writer pays no extra atomic.
 *
 * reader_pref: the underlying lock lets readers in while a writer waits
 * (glibc's default kind); the writer must not hold it while it waits for
 * fast readers, or it would shut out readers that glibc admits.
 *
 * On success the thread stays marked as u's waiting writer (wait.h): the
 * caller reads the mark before the call and puts it back once it has
 * named itself as the writer (glue_bravo.h).
 */
BRAVO_INLINE int bravo_write_lock(struct bravo *b, void *u, const struct rw_ops *ops,
				  bool writer_pref, bool reader_pref, const struct deadline *dl)
{
	const void *pending = wait_writer_pending_get();
	enum bravo_wait how = reader_pref ? BRAVO_RELEASE : BRAVO_HOLD;
	bool announced = false;
	uint64_t start = 0;
	int r = 0;

	if (!writer_pref) {
		r = ops->write_lock(u, dl);
	} else if (!ops->write_trylock(u)) {
		/* seq_cst: Dekker pair with the fast path's recheck (bravo_read_fast) */
		atomic_fetch_add_explicit(&b->word, BRAVO_WAITER, memory_order_seq_cst);
		announced = true;
		r = ops->write_lock(u, dl);
	}
	while (r == 0) {
		/*
		 * Holding the lock underneath: a handler's read on this thread
		 * gets in (wait.h), while we revoke and until our caller has
		 * named us (it restores the mark it found).
		 */
		wait_writer_pending_set(u);
		r = bravo_write_acquired(b, ops->scope, u, dl, how, &start);
		if (r == 0)
			break;
		wait_writer_pending_restore(pending);
		ops->write_unlock(u); /* revocation timed out, or drain unlocked */
		if (r != EAGAIN)
			break;
		r = bravo_drain_wait(b, ops->scope, u, dl);
		if (r == 0) {
			uint64_t drained = bravo_now();

			r = ops->write_lock(u, dl);
			/*
			 * T, the revocation's cost that the slow-down window
			 * scales, is the drain: not this wait for the lock
			 * again, which readers the lock prefers may make long.
			 */
			start += bravo_now() - drained;
		}
	}
	/*
	 * Relaxed: the count only keeps readers off the fast path (fairness);
	 * safety rests on the revocation above, done under write permission.
	 */
	if (announced)
		atomic_fetch_sub_explicit(&b->word, BRAVO_WAITER, memory_order_relaxed);
	return r;
}

/* What bravo_write_fast found. */
enum bravo_write_fast {
	BRAVO_WRITE_MISS,   /* the try-lock failed: nothing held */
	BRAVO_WRITE_HELD,   /* write-held, no bias to revoke */
	BRAVO_WRITE_REVOKE, /* the underlying lock write-held, bias or a drain to
			       revoke: call bravo_write_fast_revoke */
};

/*
 * Writer fast path: the underlying lock's try-lock, and a look at the word
 * for bias to revoke.  Its caller has not looked for a fast read hold of
 * its own, so a revocation that finds bias on must not wait (it would wait
 * forever for the caller's own slot): bravo_write_fast_revoke, kept out of
 * this inline path so that it needs no frame.  While the caller holds the
 * lock in any mode this fails: a hold of the underlying lock fails the
 * try-lock, and a fast read hold keeps RBias set and is a slot that the
 * revocation's scan finds.
 * The try-lock comes first, with no look at the word before it: the word
 * shares the underlying lock's line, and a load ahead of the try-lock's
 * RMW makes a contended writer fetch that line twice (shared, then
 * owned); that cost 12-14% of BA's throughput at 100% writes on 2 CPUs.
 */
/* The underlying lock just write-held: is there bias (or a drain) to revoke? */
BRAVO_INLINE enum bravo_write_fast bravo_write_found(struct bravo *b)
{
	/* Relaxed: RBias and DRAINING change only under the lock we now hold. */
	if (!(atomic_load_explicit(&b->word, memory_order_relaxed) & (BRAVO_RBIAS | BRAVO_DRAINING)))
		return BRAVO_WRITE_HELD;
	return BRAVO_WRITE_REVOKE;
}

BRAVO_INLINE enum bravo_write_fast bravo_write_fast(struct bravo *b, void *u,
						     const struct rw_ops *ops)
{
	if (!ops->write_trylock(u))
		return BRAVO_WRITE_MISS;
	return bravo_write_found(b);
}

/*
 * bravo_write_fast with the underlying lock's blocking write lock in place
 * of its try-lock, for a caller that holds no read of u through the table
 * and whose wait for u needs nothing of BRAVO's: no announcement (a lock
 * that does not prefer writers) and no deadline.  What the write lock
 * refuses (EDEADLK) is the full path's to answer: BRAVO_WRITE_MISS.
 */
BRAVO_INLINE enum bravo_write_fast bravo_write_fast_wait(struct bravo *b, void *u,
							  const struct rw_ops *ops)
{
	if (ops->write_lock(u, NULL) != 0)
		return BRAVO_WRITE_MISS;
	return bravo_write_found(b);
}

/*
 * After BRAVO_WRITE_REVOKE: revoke without waiting (one RMW for a bias no
 * reader used, a column scan for one whose fast readers left).  true:
 * write-held.  false: fast readers are inside (perhaps the caller itself),
 * RBias is set again and the underlying lock released.
 */
BRAVO_INLINE bool bravo_write_fast_revoke(struct bravo *b, void *u, const struct rw_ops *ops)
{
	uint64_t start = 0;

	if (bravo_revoke(b, ops->scope, u, NULL, BRAVO_NOWAIT, &start) == 0)
		return true;
	ops->write_unlock(u);
	return false;
}

/* Write try-lock: the fast path and, if bias is on, its revocation. */
BRAVO_INLINE bool bravo_write_trylock(struct bravo *b, void *u, const struct rw_ops *ops)
{
	switch (bravo_write_fast(b, u, ops)) {
	case BRAVO_WRITE_HELD:
		return true;
	case BRAVO_WRITE_REVOKE:
		return bravo_write_fast_revoke(b, u, ops);
	default:
		return false;
	}
}

BRAVO_INLINE void bravo_write_unlock(void *u, const struct rw_ops *ops)
{
	ops->write_unlock(u);
}

#endif
