/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bravo.pml - SPIN model of BRAVO's reader fast path and writer revocation
 * as implemented in locks/bravo.{h,c}.
 *
 * What is modelled, step by step (C function -> Promela):
 *   bravo_read_fast        pre-check, slot CAS, recheck of the word, the
 *                          fetch_or(USED) of the first fast reader, back-out
 *   bravo_read_fast_unlock the release store of NULL into the slot
 *   bravo_read_lock/_trylock  slow path through the underlying lock, then
 *                          bravo_read_acquired_slow/bravo_enable_slowpath
 *                          (relaxed load, "inhibited?" check, one CAS)
 *   bravo_write_lock       writer_pref: try-lock, announce in the waiter
 *                          count, blocking lock, revoke, withdraw the count
 *   bravo_write_trylock    revoke with nowait (EBUSY), unlock on failure
 *   bravo_revoke           fetch_and(~(RBIAS|USED)), skip the scan if USED
 *                          was clear, scan every slot, on EBUSY/ETIMEDOUT
 *                          fetch_or(RBIAS|USED) and release
 *
 * With -DRELEASE=1 (and WPREF=0: BRAVO_RELEASE is used over glibc's
 * reader-preferring rwlock only) the writer follows the drain protocol
 * instead, step by step:
 *   bravo_write_acquired   relaxed test of RBIAS|DRAINING under write
 *                          permission; neither set: enter
 *   bravo_revoke           RBIAS set: fetch_and(~(RBIAS|USED)), enter at
 *                          once if the old word had neither USED nor
 *                          DRAINING; then vr_holds (one seq_cst load per
 *                          slot, up to the first slot holding the lock);
 *                          clear: fetch_and(~DRAINING), enter; else try-lock
 *                          (BRAVO_NOWAIT): fetch_or(RBIAS|USED) only if this
 *                          call cleared RBias, unlock, EBUSY; else
 *                          (BRAVO_RELEASE) fetch_or(DRAINING), EAGAIN
 *   bravo_write_lock loop  unlock the underlying lock, bravo_drain_wait
 *                          (vr_wait_for_readers: wait on each slot in turn
 *                          until it does not hold the lock, holding
 *                          nothing; a timed writer may give up there,
 *                          leaving DRAINING set), take the underlying lock
 *                          again (a timed writer may give up), and back to
 *                          bravo_write_acquired
 *   bravo_enable_slowpath  also leaves bias off while DRAINING is set; its
 *                          CAS compares the whole word, DRAINING included
 * The fast path ignores DRAINING (it needs RBias, which stays clear).
 * Tolerated slots (bravo_tolerated_slots) are not modelled: tolerance is 0.
 * Readers publish the lock's token; "lock + 1 in the slot" stands for it
 * (locks are never re-initialized here).
 *
 * Abstractions:
 *  - The underlying lock (BA or glibc's rwlock) is an atomic reader-writer
 *    lock: a reader count and a writer flag changed in one atomic step.  Its
 *    own correctness is the subject of ba.pml.
 *  - The BRAVO word is split into rbias[], used[], draining[], waiters[];
 *    every C operation on the word is one atomic step on all of them (they
 *    are all single RMWs or loads of one 64-bit word in the code).
 *  - InhibitUntil (time) is a nondeterministic choice: a slow reader may
 *    find bias inhibited or not.  bravo_inhibit's CAS loop only rewrites the
 *    time bits and preserves the low bits, so it is a no-op here; it runs
 *    under write permission, so it never races with bravo_enable_slowpath
 *    (which runs under read permission), whose CAS therefore only fails on
 *    a change of RBIAS/USED/waiters.
 *  - Deadlines: a timed or try operation may give up at any point where the
 *    code checks the deadline (nondeterministic choice).
 *  - The visible readers table has NS slots; reader r's slot for lock l is
 *    (r + l) % NS.  With NS = 2 reader 0 on lock 1 and reader 1 on lock 0
 *    share slot 1 (and reader 0/lock 0, reader 1/lock 1 share slot 0): a
 *    slot holds one lock's address at a time and the other reader must go
 *    slow (collision).  With NS = 1 every pair collides.
 *  - Readers pick a lock and an operation (blocking, timed or try) anew on
 *    every iteration (the operation only once they go slow: the fast path
 *    is the same for all); so do writers.  Each thread holds one lock at a
 *    time.
 *  - The fast path's first load of the word (acquire) is only a filter: the
 *    model lets a reader try the slot CAS whatever that load would have
 *    returned, so every stale value it could read is covered.
 *
 * Memory ordering (why sequential consistency is a sound model here):
 *    The safety argument is a Dekker pair.  Reader: seq_cst CAS of its slot
 *    (A1), then seq_cst load of the word (A2) or seq_cst fetch_or(USED).
 *    Writer: seq_cst fetch_and clearing RBIAS|USED (B1), then seq_cst loads
 *    of the slots (B2).  All four are seq_cst, so they lie in C11's single
 *    total order S, consistent with program order; with C++20/C17-DR
 *    (RC11) coherence, a seq_cst load also cannot read a value older than
 *    the last seq_cst write to its location before it in S.  Hence either
 *    A2 precedes B1 in S, and then B2 (after B1) sees the reader's slot, or
 *    B1 precedes A2, and the reader sees RBIAS clear.  Those are exactly
 *    the outcomes of the interleavings SPIN explores, where each of these
 *    steps is one atomic statement.  Every modification of the word is an
 *    RMW (fetch_and/or/add/sub, CAS), so the word has a single modification
 *    order that the model's single variable reproduces; a non-seq_cst load
 *    of it (the pre-check, the writer's relaxed RBIAS test under write
 *    permission, the slow path's relaxed test) either is over-approximated
 *    (pre-check) or reads a value that cannot change concurrently (only
 *    RBIAS matters there and only the lock holder changes it).  The other
 *    non-seq_cst stores are the slot clears (release on unlock, relaxed on
 *    back-out); both store NULL, and a writer that reads one late only
 *    waits longer, which SPIN covers by scheduling the store later.  A writer
 *    that reads the unlock's NULL synchronizes with it through the acquire
 *    fence after the scan, so the reader's critical section happens before
 *    the writer's.  DRAINING is set and cleared (relaxed RMWs) only under
 *    write permission and read only under read or write permission (the
 *    fast path never reads it), so the underlying lock orders every access
 *    to it; the drain wait's slot loads only decide how long the writer
 *    waits, since it scans again under write permission before it enters.
 *
 * Properties:
 *  - mutual exclusion: a writer in its critical section sees no reader
 *    (fast or slow) of the same lock in its critical section, and vice
 *    versa (assertions at both entries);
 *  - a fast reader's slot still holds its lock when it unlocks, and no slot
 *    is left holding a lock once its reader is back outside (assertion at
 *    the top of the reader loop);
 *  - no deadlock: SPIN's invalid end-state check (only the loop heads are
 *    valid end states);
 *  - RELEASE: bias stays off while a drain is under way (RBIAS and
 *    DRAINING never both set; asserted in every step that sets either),
 *    and a writer in its drain wait does not hold the underlying lock, so
 *    slow readers get in through it meanwhile (reader preference; asserted
 *    when the wait begins).
 *
 * Parameters (-D on the spin command line): NR readers (2), NW writers (1),
 * NS slots (2), WLOCKS (1: writers use lock 0 only, readers always use
 * both; 2: writers use both, a larger state space), WPREF 1 for a
 * writer-preferring underlying lock (BA; the waiter count is then
 * modelled), RELEASE 1 for the drain protocol of BRAVO_RELEASE (needs
 * WPREF 0), MUTANT 0 for the real algorithm or:
 *   1  the writer scans the table before it clears RBias
 *   2  the reader skips the recheck after publishing its slot
 *   3  a failed revocation (EBUSY/ETIMEDOUT) does not set RBias again
 *   4  the reader enters on RBias alone, without setting USED
 *   5  the fast unlock forgets to clear the slot
 * and, with RELEASE 1:
 *   6  a writer that finds DRAINING set (and RBias clear) enters unscanned
 *   7  a slow reader re-enables bias while DRAINING is set
 *   8  a timed writer that gives up in its drain wait clears DRAINING
 *   9  the writer keeps the underlying lock through its drain wait
 * Every mutant must produce a counterexample (see models/run-models).
 */

#ifndef NR
#define NR 2
#endif
#ifndef NW
#define NW 1
#endif
#ifndef NS
#define NS 2
#endif
#ifndef WPREF
#define WPREF 1
#endif
#ifndef WLOCKS
#define WLOCKS 1
#endif
#ifndef RELEASE
#define RELEASE 0
#endif
#ifndef MUTANT
#define MUTANT 0
#endif
#if RELEASE && WPREF
#error "RELEASE is for reader-preferring underlying locks: use -DWPREF=0"
#endif

#define NL 2			/* locks 0 and 1; a slot holds lock+1, 0 = NULL */

/* the BRAVO word of each lock */
bool rbias[NL];
bool used[NL];
bool draining[NL];
byte waiters[NL];
/* the underlying lock: readers holding it, writer holding it (id + 1) */
byte ur[NL];
byte uw[NL];
/* the visible readers table */
byte slot[NS];
/* ghosts: threads inside the critical section, owner of each slot */
byte rcs[NL];
byte wcs[NL];
byte owner[NS];

#define SLOT_OF(r, l) (((r) + (l)) % NS)

#define ENTER_READ(l)  atomic { rcs[l]++; assert(wcs[l] == 0) }
#define LEAVE_READ(l)  rcs[l]--
#define ENTER_WRITE(l) atomic { wcs[l]++; assert(rcs[l] == 0 && wcs[l] == 1) }
#define LEAVE_WRITE(l) wcs[l]--
/* bias stays off while a drain is under way (checked where either is set) */
#define BIAS_OFF_WHILE_DRAINING(l) assert(!(rbias[l] && draining[l]))

#define OP_BLOCK 0
#define OP_TIMED 1
#define OP_TRY   2

proctype reader(byte id)
{
	byte l, s, op, i;
	bool rb, us, dr, ok;
	byte wt;

end:	do
	:: atomic {
		/* no slot holds a lock for this reader outside its lock calls */
		i = 0;
		do
		:: i < NS -> assert(owner[i] != id + 1 || slot[i] == 0); i++
		:: else -> break
		od;
		i = 0;
		if :: l = 0 :: l = 1 fi;
		s = SLOT_OF(id, l)
	   };
		/* ---- bravo_read_fast ---- */
#if MUTANT == 2
		/* mutant: enter on the pre-check, no recheck after the CAS */
		atomic { rb = rbias[l]; wt = waiters[l] }
		if :: !rb || wt != 0 -> goto slow :: else fi;
		atomic {
			if
			:: slot[s] == 0 -> slot[s] = l + 1; owner[s] = id + 1; ok = 1
			:: else -> ok = 0
			fi
		}
		if :: ok -> goto fast_cs :: else -> goto slow fi;
#endif
		/* pre-check (acquire load): over-approximated, see header */
		if :: true :: true -> goto slow fi;
		/* seq_cst CAS of the slot */
		atomic {
			if
			:: slot[s] == 0 -> slot[s] = l + 1; owner[s] = id + 1; ok = 1
			:: else -> ok = 0
			fi
		}
		if :: !ok -> goto slow :: else fi;
		/* seq_cst recheck of the word */
		atomic { rb = rbias[l]; us = used[l]; wt = waiters[l] }
#if MUTANT == 4
		if :: rb && wt == 0 -> goto fast_cs :: else fi;
#endif
		if
		:: rb && us && wt == 0 -> goto fast_cs
		:: rb && !us && wt == 0 ->
			/* seq_cst fetch_or(USED) */
			atomic { rb = rbias[l]; wt = waiters[l]; used[l] = 1 }
			if :: rb && wt == 0 -> goto fast_cs :: else fi
		:: else
		fi;
		/* back out: relaxed store of NULL */
		atomic { slot[s] = 0; owner[s] = 0 }
		goto slow;
fast_cs:
		ENTER_READ(l);
		LEAVE_READ(l);
		/* bravo_read_fast_unlock: release store of NULL */
		atomic {
			assert(slot[s] == l + 1 && owner[s] == id + 1);
#if MUTANT != 5
			slot[s] = 0; owner[s] = 0
#endif
		}
		goto done;
slow:
		/*
		 * ops->read_lock, or read_trylock / a timed read_lock (may fail);
		 * chosen here, as the fast path is the same for all of them
		 */
		if :: op = OP_BLOCK :: op = OP_TRY fi;
		if
		:: atomic { !uw[l] -> ur[l]++ }
		:: op != OP_BLOCK -> goto done	/* EBUSY or ETIMEDOUT */
		fi;
		/*
		 * bravo_read_acquired_slow -> bravo_enable_slowpath: bias stays
		 * off while it is on, draining, or a writer waits
		 */
		atomic { rb = rbias[l]; us = used[l]; dr = draining[l]; wt = waiters[l] }
		if
#if MUTANT == 7
		/* mutant: re-enable bias even while a drain is under way */
		:: rb || wt != 0 -> skip
#else
		:: rb || dr || wt != 0 -> skip
#endif
		:: else ->
			if
			:: true	/* inhibited (InhibitUntil in the future) */
			:: true ->
				/* CAS(word, w, w | RBIAS), release */
				atomic {
					if
					:: rbias[l] == rb && used[l] == us &&
					   draining[l] == dr && waiters[l] == wt ->
						rbias[l] = 1;
						BIAS_OFF_WHILE_DRAINING(l)
					:: else
					fi
				}
			fi
		fi;
		ENTER_READ(l);
		LEAVE_READ(l);
		ur[l]--;
done:		/* forget the iteration's locals (smaller state space) */
		atomic { l = 0; s = 0; op = 0; rb = 0; us = 0; dr = 0; ok = 0; wt = 0 }
	od
}

proctype writer(byte id)
{
	byte l, s, op;
	bool announced, old_used, failed;
#if RELEASE
	bool cleared;
#endif

end:	do
	:: atomic {
		if :: l = 0 :: WLOCKS > 1 -> l = 1 fi;
		if :: op = OP_BLOCK :: op = OP_TIMED :: op = OP_TRY fi;
		announced = 0; failed = 0
	   };
		/* ---- acquire write permission on the underlying lock ---- */
		if
		:: op == OP_TRY ->
			atomic {
				if
				:: !uw[l] && ur[l] == 0 -> uw[l] = id + 1
				:: else -> failed = 1
				fi
			}
			if :: failed -> goto done :: else fi
		:: op != OP_TRY && !WPREF ->
			if
			:: atomic { !uw[l] && ur[l] == 0 -> uw[l] = id + 1 }
			:: op == OP_TIMED -> goto done
			fi
		:: op != OP_TRY && WPREF ->
			atomic {
				if
				:: !uw[l] && ur[l] == 0 -> uw[l] = id + 1
				:: else -> failed = 1
				fi
			}
			if
			:: failed ->
				failed = 0;
				/* seq_cst fetch_add of the waiter count */
				waiters[l]++;
				announced = 1;
				if
				:: atomic { !uw[l] && ur[l] == 0 -> uw[l] = id + 1 }
				:: op == OP_TIMED -> failed = 1
				fi
			:: else
			fi
		fi;
		if :: failed -> goto withdraw :: else fi;
#if RELEASE
		/*
		 * BRAVO_RELEASE (blocking and timed) and BRAVO_NOWAIT (try) over
		 * a reader-preferring underlying lock: no waiter count.
		 */
acquired:
		/* ---- bravo_write_acquired: relaxed test, stable now ---- */
#if MUTANT == 6
		/* mutant: a writer that finds DRAINING alone enters unscanned */
		if :: !rbias[l] -> goto enter :: else fi;
#else
		if :: !rbias[l] && !draining[l] -> goto enter :: else fi;
#endif
		/* ---- bravo_revoke ---- */
		if
		:: rbias[l] ->
			/*
			 * seq_cst fetch_and(~(RBIAS|USED)); old_used: old &
			 * (USED|DRAINING); cleared: only a try-lock reads it
			 */
			atomic {
				old_used = used[l] || draining[l];
				rbias[l] = 0; used[l] = 0;
				cleared = (op == OP_TRY)
			}
			/* no fast reader since the last scan: nothing to wait for */
			if :: !old_used -> goto enter :: else fi
		:: else	/* DRAINING alone: scan */
		fi;
		/* vr_holds: seq_cst load of each slot, up to one holding the lock */
		s = 0;
		do
		:: s < NS && slot[s] != l + 1 -> s++
		:: else -> break
		od;
		if
		:: s == NS ->
			/* clear: relaxed fetch_and(~DRAINING) ends any drain */
			draining[l] = 0;
			goto enter	/* bravo_inhibit: time bits only */
		:: else
		fi;
		if
		:: op == OP_TRY ->
			/* BRAVO_NOWAIT: EBUSY; RBias back only if this call cleared it */
			atomic {
				if :: cleared -> rbias[l] = 1; used[l] = 1 :: else fi;
				BIAS_OFF_WHILE_DRAINING(l)
			}
			uw[l] = 0;
			goto done
		:: else
		fi;
		/* BRAVO_RELEASE: relaxed fetch_or(DRAINING), EAGAIN */
		atomic { draining[l] = 1; BIAS_OFF_WHILE_DRAINING(l) }
#if MUTANT != 9
		/* the caller releases the underlying lock ... */
		uw[l] = 0;
#endif
		/*
		 * ... and waits in bravo_drain_wait -> vr_wait_for_readers, each
		 * slot in turn, holding nothing: readers get in through the
		 * underlying lock meanwhile (reader preference)
		 */
		atomic { assert(uw[l] != id + 1); s = 0 }
		do
		:: s == NS -> break
		:: s < NS && slot[s] != l + 1 -> s++
		:: s < NS && slot[s] == l + 1 && op == OP_TIMED ->
			/* ETIMEDOUT: DRAINING stays set, a later writer ends it */
#if MUTANT == 8
			/* mutant: the writer that gives up ends the drain */
			draining[l] = 0;
#endif
#if MUTANT == 9
			uw[l] = 0;
#endif
			goto done
		od;
#if MUTANT == 9
		/* mutant: held the underlying lock while it waited */
		uw[l] = 0;
#endif
		/* ops->write_lock again (may time out), then re-check */
		if
		:: atomic { !uw[l] && ur[l] == 0 -> uw[l] = id + 1 }
		:: op == OP_TIMED -> goto done
		fi;
		goto acquired;
#else
		/* ---- bravo_write_acquired: relaxed RBias test, stable now ---- */
		if
		:: rbias[l] ->
			/* ---- bravo_revoke ---- */
#if MUTANT == 1
			/* mutant: scan first, clear afterwards */
			s = 0;
			do
			:: s == NS -> break
			:: s < NS && slot[s] != l + 1 -> s++
			:: s < NS && slot[s] == l + 1 && op != OP_BLOCK -> failed = 1; break
			od;
			atomic { old_used = used[l]; rbias[l] = 0; used[l] = 0 }
#else
			/* seq_cst fetch_and(~(RBIAS|USED)) */
			atomic { old_used = used[l]; rbias[l] = 0; used[l] = 0 }
			if
			:: old_used ->
				/* vr_wait_for_readers: seq_cst load of each slot */
				s = 0;
				do
				:: s == NS -> break
				:: s < NS && slot[s] != l + 1 -> s++
				:: s < NS && slot[s] == l + 1 && op != OP_BLOCK ->
					/* EBUSY (nowait) or ETIMEDOUT */
					failed = 1; break
				od
			:: else	/* no fast reader since the last scan */
			fi;
#endif
			if
			:: failed ->
#if MUTANT != 3
				/* fetch_or(RBIAS|USED), still under write permission */
				atomic { rbias[l] = 1; used[l] = 1 }
#endif
				uw[l] = 0;
				goto withdraw
			:: else	/* bravo_inhibit: time bits only */
			fi
		:: else
		fi;
#endif
enter:
		if :: announced -> waiters[l]--; announced = 0 :: else fi;
		ENTER_WRITE(l);
		LEAVE_WRITE(l);
		uw[l] = 0;
		goto done;
withdraw:
		if :: announced -> waiters[l]-- :: else fi;
done:		atomic {
			l = 0; s = 0; op = 0; announced = 0; old_used = 0; failed = 0;
#if RELEASE
			cleared = 0
#endif
		}
	od
}

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i < NR -> run reader(i); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> run writer(i); i++
		:: else -> break
		od
	}
}
