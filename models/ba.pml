/*
 * ba.pml - SPIN model of the Brandenburg-Anderson phase-fair lock as
 * implemented in locks/ba.{h,c}: the rin/rout reader indicator, the writer
 * phase (BA_PRES plus sequence number), the writer mutex and futex parking.
 *
 * What is modelled (C function -> Promela):
 *   ba_read_lock            fetch_add(rin, RINC), then the slow path
 *   ba_read_lock_slowpath   re-read rin, CAS in BA_RPARK, park on rin's
 *                           writer half, on time-out ba_read_withdraw
 *   ba_read_trylock         CAS loop adding RINC while no writer is present
 *   ba_read_unlock(_wake)   fetch_add(rout, ROUT_INC); if BA_WPARK was set,
 *                           fetch_and(~WPARK) and wake one
 *   wmutex_lock, the CAS of ba_write_trylock, ba_write_unlock_mutex:
 *                           the three-state futex mutex (0, 1, 2)
 *   ba_write_announce       read the sequence, one fetch_add that sets
 *                           BA_PRES and the next sequence: returns the ticket
 *   ba_write_wait           drained test, fetch_or(WPARK) and re-check in
 *                           the returned value, park on rout
 *   ba_write_unlock         fetch_and(~(PRES|RPARK)), wake all readers if
 *                           RPARK was set, unlock the mutex
 *   ba_write_trylock        mutex try-lock, then a CAS that announces only
 *                           on a rin whose count equals rout's (one step)
 *
 * Abstractions:
 *  - rin is the tuple (cnt, pres, rpark, seq), rout is (ocnt, wpark); each
 *    C atomic operation on one of the words is one atomic step on its
 *    tuple.  A CAS loop that re-reads until its condition fails
 *    (ba_read_trylock, ba_read_withdraw) is one conditional atomic step:
 *    the loop ends exactly when one CAS succeeds on a value meeting the
 *    condition, or a read value fails it.
 *  - Counts are kept modulo CNT (4): arrivals minus departures is at most
 *    the number of readers, so equality modulo CNT is equality modulo 2^31.
 *    The sequence is kept modulo SEQ (4) instead of 2^30; see TMO.
 *  - Futexes: futex_wait(word, val) atomically compares the word and, if
 *    equal, puts the thread in the word's wait set (otherwise it returns at
 *    once, EAGAIN); the thread then blocks until a futex_wake takes it out
 *    of the set (a wake of one picks any sleeper), or until it times out.
 *    Spurious returns (EINTR) are not modelled: every caller re-checks its
 *    condition in a loop, so they only add iterations.  A lost wake-up
 *    shows as a thread blocked forever: an invalid end state.
 *  - Spinning (ba_spin_phase, wait_spin, the mutex's spin phase) is only
 *    re-reading: the model goes straight to the park path, except that the
 *    mutex's spin CAS is kept as an optional first attempt.
 *  - Deadlines: timed operations may time out while parked, at most TMO
 *    times in a whole run (a global budget shared with the try-lock race
 *    below).  The sequence is kept modulo SEQ = TMO + 2.  A reader sees its
 *    writer phase come back only after SEQ - 1 writer phases in a row that
 *    ended without a critical section (2^30 - 1 in the code) while it was
 *    descheduled; such a phase comes only from a time-out, and the budget
 *    bounds those to TMO < SEQ - 1, as 2^30 does in practice.  The write
 *    try-lock announces by a CAS only on a drained lock, so it always
 *    enters.  -DSEQWRAP=1 models the try-lock the code had before: a count
 *    test of two separate loads, then an unconditional announce that can
 *    count a reader arriving in between and leave again; with no bound on
 *    such phases SPIN finds the resulting hang (the reader waits for a
 *    phase to end, the writer of that phase counted it and waits for it).
 *
 * Memory ordering: the model is sequentially consistent.  Every update of
 * rin, rout and wmutex is an RMW, so each word has one modification order
 * and SC is exact for the values the RMWs see; the orderings in the code
 * (acquire on the reader's arrival and the writer's drained test, release
 * on departures and on the writer's leave, acq_rel on the announce) give
 * the happens-before between critical sections that the interleaving model
 * takes for granted.  The protocol needs no store-load (Dekker) ordering:
 * a reader and a writer always meet on the same word through RMWs (the
 * reader's arrival vs the writer's announce on rin, departures vs the
 * WPARK fetch_or on rout).
 *
 * Properties:
 *  - mutual exclusion: a writer in its critical section sees no reader and
 *    no other writer there, a reader sees no writer (assertions);
 *  - phase-fairness: a reader that arrived during a writer phase enters
 *    after at most one writer critical section (assertion on a ghost count);
 *  - no deadlock and no lost wake-up: invalid end states.
 *
 * Parameters: NR readers (2), NW writers (2), TMO (1), TRY (1: try-lock
 * operations too), SEQWRAP (0), MUTANT 0 or:
 *   1  ba_write_unlock does not wake parked readers
 *   2  ba_write_wait parks without re-checking the count it got back
 *      from its fetch_or(WPARK)
 *   3  ba_write_trylock announces (and enters) without its count test
 *   4  a reader parks without setting BA_RPARK
 */

#ifndef NR
#define NR 2
#endif
#ifndef NW
#define NW 2
#endif
#ifndef TMO
#define TMO 1
#endif
#ifndef TRY
#define TRY 1
#endif
#ifndef SEQWRAP
#define SEQWRAP 0
#endif
#ifndef MUTANT
#define MUTANT 0
#endif

#define CNT (NR + 1)
#define SEQ (TMO + 2)

/* rin */
byte cnt;
bool pres;
bool rpark;
byte seq;
/* rout */
byte ocnt;
bool wpark;
/* wmutex: 0 free, 1 held, 2 held with sleepers */
byte wm;
/* futex wait sets: bit i = thread i (readers 0..NR-1, writers NR..) */
byte fx_rin;
byte fx_rout;
byte fx_wm;
/* deadline budget */
byte tmo = TMO;
/* ghosts */
byte rcs;
byte wcs;
bool waiting[NR];
byte seen[NR];

#define BIT(id) (1 << (id))

#define OP_BLOCK 0
#define OP_TIMED 1
#define OP_TRY   2

/* leave the wait set, by a wake (r = 0) or a time-out (r = 1) */
inline park_block(set, id, timed, r)
{
	if
	:: (set & BIT(id)) == 0 -> r = 0
	:: atomic { timed && tmo > 0 && (set & BIT(id)) != 0 ->
		set = set & ~BIT(id); tmo--; r = 1 }
	fi
}

/* futex_wake(word, 1): any one sleeper */
inline wake_one(set)
{
	atomic {
		if
		:: set == 0
		:: set & BIT(0) -> set = set & ~BIT(0)
		:: set & BIT(1) -> set = set & ~BIT(1)
		:: set & BIT(2) -> set = set & ~BIT(2)
		:: set & BIT(3) -> set = set & ~BIT(3)
		:: set & BIT(4) -> set = set & ~BIT(4)
		fi
	}
}

proctype reader(byte id)
{
	byte op, wseq, vcnt;
	bool vrpark, timed, r;

end:	do
	:: if
		:: op = OP_BLOCK
		:: TMO > 0 -> op = OP_TIMED
		:: TRY -> op = OP_TRY
		fi;
		timed = (op != OP_BLOCK);
		if
		:: op == OP_TRY ->
			/* ba_read_trylock */
			atomic {
				if
				:: !pres -> cnt = (cnt + 1) % CNT; r = 1
				:: else -> r = 0
				fi
			}
			if :: r -> goto acquired :: else -> goto done fi
		:: else
		fi;
		/* ba_read_lock: fetch_add(rin, RINC), acquire */
		atomic {
			cnt = (cnt + 1) % CNT;
			if
			:: !pres -> goto acquired
			:: else -> wseq = seq; waiting[id] = 1; seen[id] = 0
			fi
		}
		/* ba_read_lock_slowpath(wphase = PRES | wseq) */
slowpath:
		/* v = rin; if the phase changed, enter (v's PRES/seq are wphase) */
		atomic {
			if
			:: !pres || seq != wseq -> goto acquired
			:: else -> vrpark = rpark; vcnt = cnt
			fi
		}
#if MUTANT != 4
		if
		:: !vrpark ->
			/* CAS(rin, v, v | RPARK) */
			atomic {
				if
				:: pres && rpark == vrpark && cnt == vcnt && seq == wseq ->
					rpark = 1; r = 1
				:: else -> r = 0
				fi;
				vcnt = 0
			}
			if :: !r -> goto slowpath :: else fi
		:: else
		fi;
		vrpark = 1;
#endif
		/* wait_park(rin's writer half, v | RPARK) */
		atomic {
			if
			:: pres && rpark == vrpark && seq == wseq ->
				fx_rin = fx_rin | BIT(id)
			:: else
			fi;
			vrpark = 0
		}
		park_block(fx_rin, id, timed, r);
		if
		:: r ->
			/* ba_read_withdraw */
			atomic {
				if
				:: pres && seq == wseq ->
					cnt = (cnt + CNT - 1) % CNT;
					waiting[id] = 0;
					goto done
				:: else
				fi
			}
		:: else
		fi;
		goto slowpath;
acquired:
		atomic {
			rcs++;
			assert(wcs == 0);
			assert(seen[id] <= 1);
			waiting[id] = 0
		}
		rcs--;
		/* ba_read_unlock: fetch_add(rout, ROUT_INC), release */
		atomic { r = wpark; ocnt = (ocnt + 1) % CNT }
		if
		:: r ->
			wpark = 0;	/* fetch_and(~WPARK) */
			wake_one(fx_rout)
		:: else
		fi;
done:		atomic { op = 0; wseq = 0; vcnt = 0; vrpark = 0; timed = 0; r = 0 }
	od
}

proctype writer(byte id)
{
	byte op, ticket, v, i;
	bool timed, r;

end:	do
	:: if
		:: op = OP_BLOCK
		:: TMO > 0 -> op = OP_TIMED
		:: TRY -> op = OP_TRY
		fi;
		timed = (op != OP_BLOCK);
		if
		:: op == OP_TRY ->
			/* ba_write_trylock: CAS(wmutex, 0, 1) */
			atomic {
				if
				:: wm == 0 -> wm = 1; r = 1
				:: else -> r = 0
				fi
			}
			if :: !r -> goto done :: else fi;
			/*
			 * The code: load rout, then CAS rin only if its count
			 * equals it (one step here).  SEQWRAP: the old two-load
			 * test, where a reader can arrive and another depart
			 * between the loads, the announce counts the new reader
			 * and the try-lock leaves again (see the header).
			 */
			if
			:: atomic { SEQWRAP -> v = cnt }
				if
				:: v != ocnt -> goto unlock_mutex
				:: else -> goto announce
				fi
			:: atomic {
				if
				:: MUTANT != 3 && cnt != ocnt -> goto unlock_mutex
				:: else ->
					ticket = cnt; pres = 1; seq = (seq + 1) % SEQ;
					goto cs
				fi
			   }
			fi
		:: else ->
			/* wmutex_lock: optional spin-phase CAS, then exchange(2) */
			if
			:: atomic { wm == 0 -> wm = 1 };
				goto announce
			:: true
			fi;
mutex_sleep:
			/* exchange(wmutex, 2): got it if it was 0 */
			atomic {
				if
				:: wm == 0 -> wm = 2; goto announce
				:: else -> wm = 2
				fi
			}
			atomic { if :: wm == 2 -> fx_wm = fx_wm | BIT(id) :: else fi }
			park_block(fx_wm, id, timed, r);
			if :: r -> goto done :: else -> goto mutex_sleep fi
		fi;
announce:
		/* ba_write_announce: the sequence is stable under the mutex */
		atomic {
			assert(!pres);
			ticket = cnt;
			pres = 1;
			seq = (seq + 1) % SEQ
		}
		if
		:: op == OP_TRY ->
			if
			:: ocnt == ticket -> goto cs
			:: else -> goto leave
			fi
		:: else
		fi;
		/* ba_write_wait */
wait:
		if :: ocnt == ticket -> goto cs :: else fi;
		atomic {
			/* v = fetch_or(rout, WPARK) | WPARK; re-check its count */
			v = ocnt; wpark = 1;
#if MUTANT != 2
			if :: v == ticket -> v = 0; goto cs :: else fi
#endif
		}
		/* wait_park(rout, v | WPARK) */
		atomic {
			if :: ocnt == v && wpark -> fx_rout = fx_rout | BIT(id) :: else fi;
			v = 0
		}
		park_block(fx_rout, id, timed, r);
		if
		:: r && ocnt != ticket -> goto leave
		:: else -> goto wait
		fi;
cs:
		atomic {
			wcs++;
			assert(rcs == 0 && wcs == 1);
			i = 0;
			do
			:: i < NR ->
				if
				:: waiting[i] -> seen[i]++; assert(seen[i] <= 1)
				:: else
				fi;
				i++
			:: else -> break
			od;
			i = 0
		}
		wcs--;
leave:
		/* ba_write_unlock: fetch_and(~(PRES|RPARK)), release */
		atomic { r = rpark; pres = 0; rpark = 0 }
#if MUTANT != 1
		if :: r -> fx_rin = 0 :: else fi;	/* wake all */
#endif
unlock_mutex:
		/* ba_write_unlock_mutex: exchange(0), wake one if it was 2 */
		atomic { r = (wm == 2); wm = 0 }
		if :: r -> wake_one(fx_wm) :: else fi;
done:		atomic { op = 0; ticket = 0; v = 0; timed = 0; r = 0 }
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
		:: i < NW -> run writer(NR + i); i++
		:: else -> break
		od
	}
}
