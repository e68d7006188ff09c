/* propose.pml: a Promela model of the proposal journal (docs/propose.md, "Resume and faults";
 * docs/verification.md, "Model check"). Checked by tests/model/check_model.sh beside flotilla.pml.
 *
 * One process, the Scheduler: one `flotilla run` after another over the rounds of a campaign with
 * a fleet of P proposers (scheduler/src/Campaign.cpp: run_round, propose, complete_proposals,
 * fleet_answered; ProposeStage::judge). A SIGKILL may fall between any two durable writes (one
 * row appended to /proposals or /candidates, one decision recorded); the Scheduler then starts
 * again from what is recorded. A proposer's answer (the files in its {out}) is not durable: a
 * proposer asked again writes into a fresh folder, and may answer differently.
 *
 * The round's flush, as the code writes it (Store::Group, commit_pending): the answering
 * proposers' rows in order, each proposer's proposals then its `answered` row, then the
 * candidates of every accepted proposal of the round that has none. Then the candidates are
 * evaluated: verified or rolled back.
 *
 * Properties (assertions):
 *   Q1 a proposer is never asked a round it answered, and answers each round at most once;
 *   Q2 an accepted proposal never gets two candidates, and a candidate's proposal is recorded;
 *      when the campaign finishes every accepted proposal has exactly one candidate and every
 *      proposer answered every round (no answer is lost with an unrecorded flush);
 *   Q3 a proposal is accepted only on a verified parent: a rolled-back or pending candidate is
 *      never built upon.
 * Mutants (-DMUTANT_X, each must be caught): ANY_ANSWERED (a round any proposer answered is
 * skipped: the others' answers, lost with the flush, are never asked again), NO_COMPLETE (no
 * candidates for accepted proposals a stopped flush left), COMPLETE_BLIND (candidates added
 * without looking for one), ASK_ANSWERED (every proposer asked again), PARENT_UNCHECKED (any
 * parent accepted), CANDIDATES_FIRST (candidates flushed before the proposals they come from).
 */

#ifndef R
#define R 2        /* rounds with proposers (round 0 is the baseline's) */
#endif
#ifndef P
#define P 2        /* proposers in the fleet */
#endif
#ifndef K
#define K 2        /* proposals one answer may hold */
#endif
#ifndef MAXKILL
#define MAXKILL 2  /* SIGKILLs of the scheduler */
#endif

#define NROWS (R * P * (K + 1))
#define NCAND (1 + R * P * K)
#define NONE 255

mtype = { ACCEPTED, REFUSED, ANSWERED };
mtype = { PENDING, VERIFIED, ROLLED_BACK };

/* Durable: the results file. */
mtype row_kind[NROWS];
byte row_round[NROWS], row_proposer[NROWS], row_parent[NROWS];
byte nrows = 0;
byte cand_proposal[NCAND];   /* the proposal row a candidate came from; NONE for the baseline */
byte cand_round[NCAND];
mtype cand_status[NCAND];
byte ncand = 1;              /* candidate 0: the baseline, verified in round 0 */
byte kills = 0;

/* A proposer's answer, before it is judged: NONE, or the parent each proposal names. */
byte answer[P * K];

inline kill_point() {
  if
  :: kills < MAXKILL -> kills++; goto restart
  :: true -> skip
  fi
}

inline answered(r, i, result) {
  result = false;
  j = 0;
  do
  :: j < nrows -> if :: row_kind[j] == ANSWERED && row_round[j] == r && row_proposer[j] == i -> result = true
                     :: else -> skip fi; j++
  :: else -> break
  od
}

inline has_candidate(row, result) {
  result = false;
  h = 0;
  do
  :: h < ncand -> if :: cand_proposal[h] == row -> result = true :: else -> skip fi; h++
  :: else -> break
  od
}

inline append_row(kind, r, i, parent) {
  assert(nrows < NROWS);
  row_kind[nrows] = kind; row_round[nrows] = r; row_proposer[nrows] = i; row_parent[nrows] = parent;
  nrows++
}

inline append_candidate(row, r) {
  has_candidate(row, found);
  assert(!found);                                   /* Q2: never two candidates */
  assert(row < nrows && row_kind[row] == ACCEPTED); /* Q2: its proposal is recorded */
  assert(cand_status[row_parent[row]] == VERIFIED); /* Q3: built on a verified parent */
  cand_proposal[ncand] = row; cand_round[ncand] = r; cand_status[ncand] = PENDING;
  ncand++
}

/* Candidates for the round's accepted proposals that have none (complete_proposals). */
inline complete(r) {
  k = 0;
  do
  :: k < nrows ->
     if
     :: row_kind[k] == ACCEPTED && row_round[k] == r ->
#ifdef MUTANT_COMPLETE_BLIND
        found = false;
#else
        has_candidate(k, found);
#endif
        if
        :: !found -> kill_point(); append_candidate(k, r)
        :: else -> skip
        fi
     :: else -> skip
     fi;
     k++
  :: else -> break
  od
}

/* Every proposer answered round r (fleet_answered). */
inline fleet_answered(r, result) {
  result = true;
  i = 0;
  do
  :: i < P -> answered(r, i, one); if :: !one -> result = false :: else -> skip fi; i++
  :: else -> break
  od
}

inline any_answered(r, result) {
  result = false;
  i = 0;
  do
  :: i < P -> answered(r, i, one); if :: one -> result = true :: else -> skip fi; i++
  :: else -> break
  od
}

inline round_has_candidates(r, result) {
  result = false;
  j = 1;
  do
  :: j < ncand -> if :: cand_round[j] == r -> result = true :: else -> skip fi; j++
  :: else -> break
  od
}

active proctype Scheduler() {
  byte r, i, j, k, q, h, parent;
  bool found, one, done_round;
  d_step { cand_proposal[0] = NONE; cand_status[0] = VERIFIED; cand_round[0] = 0 }
restart:
  r = 1;
  do
  :: r <= R ->
     fleet_answered(r, done_round);
#ifdef MUTANT_ANY_ANSWERED
     any_answered(r, done_round);
#endif
     if
     :: done_round ->
#ifndef MUTANT_NO_COMPLETE
        complete(r);
#endif
        skip
     :: else -> skip
     fi;
     round_has_candidates(r, found);
     if
     :: !found && !done_round ->
        /* A fresh round: the proposers that have not answered it run, each into a fresh {out}. */
        i = 0;
        do
        :: i < P ->
           answered(r, i, one);
#ifdef MUTANT_ASK_ANSWERED
           one = false;
#endif
           if
           :: !one ->
              /* Q1: asked only if it has not answered (the assert catches a second answer). */
              q = 0;
              do
              :: q < K -> if
                          :: answer[i * K + q] = NONE
                          :: answer[i * K + q] = 0            /* the baseline */
                          :: ncand > 1 -> answer[i * K + q] = ncand - 1   /* the newest candidate */
                          fi; q++
              :: else -> break
              od
           :: else -> q = 0; do :: q < K -> answer[i * K + q] = NONE; q++ :: else -> break od
           fi;
           i++
        :: else -> break
        od;
#ifdef MUTANT_CANDIDATES_FIRST
        /* (the mutant) candidates before the rows: ids the rows will get */
        i = 0; q = nrows;
        do
        :: i < P ->
           answered(r, i, one);
           if
           :: !one ->
              k = 0;
              do
              :: k < K -> if
                          :: answer[i * K + k] != NONE && cand_status[answer[i * K + k]] == VERIFIED ->
                             kill_point();
                             cand_proposal[ncand] = q; cand_round[ncand] = r; cand_status[ncand] = PENDING; ncand++;
                             row_parent[q] = answer[i * K + k]
                          :: else -> skip
                          fi;
                          if :: answer[i * K + k] != NONE -> q++ :: else -> skip fi; k++
              :: else -> break
              od;
              q++
           :: else -> skip
           fi;
           i++
        :: else -> break
        od;
#endif
        /* The flush: each answering proposer's rows, then its answered row. */
        i = 0;
        do
        :: i < P ->
           answered(r, i, one);
#ifdef MUTANT_ASK_ANSWERED
           assert(!one);   /* Q1 */
#endif
           if
           :: !one ->
              k = 0;
              do
              :: k < K ->
                 parent = answer[i * K + k];
                 if
                 :: parent != NONE ->
                    kill_point();
#ifdef MUTANT_PARENT_UNCHECKED
                    append_row(ACCEPTED, r, i, parent)
#else
                    if
                    :: cand_status[parent] == VERIFIED -> append_row(ACCEPTED, r, i, parent)
                    :: else -> append_row(REFUSED, r, i, parent)
                    fi
#endif
                 :: else -> skip
                 fi;
                 k++
              :: else -> break
              od;
              kill_point();
              append_row(ANSWERED, r, i, NONE)
           :: else -> skip
           fi;
           i++
        :: else -> break
        od;
#ifndef MUTANT_CANDIDATES_FIRST
        complete(r)
#endif
     :: else -> skip
     fi;
     /* The round's candidates are evaluated: verified or rolled back, each a durable decision. */
     j = 1;
     do
     :: j < ncand ->
        if
        :: cand_round[j] == r && cand_status[j] == PENDING ->
           kill_point();
           if
           :: cand_status[j] = VERIFIED
           :: cand_status[j] = ROLLED_BACK
           fi
        :: else -> skip
        fi;
        j++
     :: else -> break
     od;
     r++
  :: else -> break
  od;
  /* The campaign finished: nothing lost, nothing doubled. */
  j = 1;
  do
  :: j < ncand -> assert(cand_proposal[j] < nrows && row_kind[cand_proposal[j]] == ACCEPTED); j++  /* Q2 */
  :: else -> break
  od;
  j = 0;
  do
  :: j < nrows ->
     if
     :: row_kind[j] == ACCEPTED -> has_candidate(j, found); assert(found)   /* Q2 */
     :: else -> skip
     fi;
     j++
  :: else -> break
  od;
  r = 1;
  do
  :: r <= R ->
     i = 0;
     do
     :: i < P -> answered(r, i, one); assert(one); i++   /* Q2: every round answered by all */
     :: else -> break
     od;
     r++
  :: else -> break
  od;
  /* Q1: at most one answered row per (round, proposer). */
  j = 0;
  do
  :: j < nrows ->
     if
     :: row_kind[j] == ANSWERED ->
        k = j + 1;
        do
        :: k < nrows -> assert(!(row_kind[k] == ANSWERED && row_round[k] == row_round[j] &&
                                 row_proposer[k] == row_proposer[j])); k++
        :: else -> break
        od
     :: else -> skip
     fi;
     j++
  :: else -> break
  od
}
