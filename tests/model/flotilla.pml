/* flotilla.pml: a Promela model of flotilla's protocol for running tasks on Slurm and
 * recording their results. What each part stands for in the code, what the model leaves out,
 * the bounds and the figures: docs/verification.md, "Model check". Checked by
 * tests/model/check_model.sh (ctest label `model`).
 *
 * Three processes:
 *   Scheduler  one `flotilla run` after another: the campaign loop (scheduler/src/Campaign.cpp,
 *              CampaignRunner) with its Slurm backend in-process (jobs/src/slurm/: SlurmBackend
 *              and its parts Restart, Poller, Submitter, TaskLedger).
 *              A SIGKILL may fall between any two of its steps; it is then run again;
 *   Slurm      slurmctld and the jobs' flotilla-worker ranks: starts jobs, rank 0 appends
 *              results to the job's results.h5, jobs end COMPLETED, FAILED (a rank died),
 *              CANCELLED (scancel), TIMEOUT, NODE_FAIL or PREEMPTED (a bounded number of faults),
 *              and a job Slurm has marked ended may still append one result (KillWait);
 *   Chaos      SIGKILL and SIGINT of the scheduler (with or without --cancel-on-interrupt) and
 *              `flotilla cancel`, bounded together.
 *
 * One phase of one round: NT = 3 tasks (trial keys) of NC = 2 candidates; tasks 0 and 1 are
 * candidate 0's shards, task 2 candidate 1's. A candidate is verified when all its shards passed,
 * rolled back once one failed (results/src/Analysis.cpp summarize_candidate).
 *
 * A step of the Scheduler is atomic when it writes nothing durable, or one durable thing (a
 * folder, a submission, a file, one HDF5 append): a SIGKILL can fall between any two durable
 * writes, and a crash in the middle of a computation that writes nothing durable is the same as
 * a crash before it.
 *
 * Properties (assertions; P-numbers as in docs/verification.md):
 *   P1 a task's result is recorded at most once, and when the campaign finishes every task's
 *      result is recorded exactly once;
 *   P2 a decision (verified, rolled back) is recorded once, never undone, and agrees with the
 *      recorded trials: no verified candidate is lost;
 *   P3 no job runs with no owner while a scheduler runs, and none is left running holding a task
 *      whose result is not recorded when the campaign finishes;
 *   P4 a trial is recorded for the configuration that ran;
 *   P5 no half record survives a crash (metric rows without their trial row);
 *   P6 no (task, attempt) runs in two jobs at once;
 *   P7 a task is declared lost only when its job's results hold no result of that attempt;
 *   progress: with crashes and faults bounded, the campaign finishes (LIVENESS, weak fairness).
 *
 * Switches (-D at `spin -a`):
 *   MUTANT_*          one seeded bug each: the check must fail (check_model.sh);
 *   PROMISE_REATTACH  adds the re-attach promise of docs/slurm.md ("a result already in a job's
 *                     results is taken as it is", a re-attached task is followed at its job's
 *                     attempt) and makes P6 "no (task, attempt) in two submitted jobs". The
 *                     code breaks it after a late result (a known bug, see the docs; at the
 *                     full bound it breaks P6 itself);
 *   FIX_RESUME_ATTEMPTS  a candidate fix of that bug, in the model only;
 *   FINAL_PHASE       the phase is the campaign's last one: nothing after it would notice a stop
 *                     that run_tasks() missed (a known bug, see the docs);
 *   FIX_STOP_CHECK    a candidate fix of that bug, in the model only;
 *   LIVENESS          adds the progress claim (pan -a -f);
 *   KEEP_END_STATES   keeps Slurm's end states apart (see END_AS);
 *   ALL_FLAKY         every task may fail, not only task 0.
 * Bounds: NJ, MA, MAXSTOP, MAXFAULT (check_model.sh gives the ones it runs).
 */

#define NT 3                 /* tasks: trial keys (candidate, kind, index) */
#define NC 2                 /* candidates */

#ifndef NJ
#define NJ 5                 /* job folder slots in jobs_dir */
#endif
#ifndef MA
#define MA 2                 /* resources.max_attempts */
#endif
#ifndef MAXSTOP
#define MAXSTOP 2            /* SIGKILLs, SIGINTs and `flotilla cancel`s of the scheduler, together */
#endif
#ifndef MAXFAULT
#define MAXFAULT 2           /* job faults: a rank died, TIMEOUT, NODE_FAIL, PREEMPTED, a user's scancel */
#endif

#define IX(j, t) ((j) * NT + (t))

/* Slurm job states (jobs/include/flotilla/jobs/Slurm.h, JobState). NONE: never submitted.
 * GONE: ended, and no running scheduler has seen how. Which end state it was can no longer be
 * observed (a restarted scheduler only asks whether a job is still active), so the model
 * forgets it, which keeps equivalent states equal. */
mtype = { NONE, PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, GONE };

#define LIVE(j) (jst[j] == PENDING || jst[j] == RUNNING)
/* is_terminal() in jobs/src/slurm/SlurmScript.cpp */
#ifdef MUTANT_WAIT_ON_ENDED
#define TERMINAL(s) ((s) == COMPLETED || (s) == FAILED || (s) == CANCELLED || (s) == TIMEOUT || (s) == NODE_FAIL || \
                     (s) == GONE)
#else
#define TERMINAL(s) ((s) == COMPLETED || (s) == FAILED || (s) == CANCELLED || (s) == TIMEOUT || (s) == NODE_FAIL || \
                     (s) == PREEMPTED || (s) == GONE)
#endif

/* TaskResult::status as the backend returns it (jobs/include/flotilla/jobs/Task.h) */
#define ST_OK 1
#define ST_FAILED 2      /* a non-zero exit code, a timeout: a result */
#define ST_LOST 3        /* its job ended before it reported */
#define ST_CANCELLED 4   /* cancelled by flotilla (cancel_all) */

/* ---------------------------------------------------------------- durable state ---------- */
/* The campaign file (results/src/Store.cpp): what survives a SIGKILL. */
byte cands;              /* /candidates of the batch: 0 none, else its configuration (1 or 2) */
byte nrow[NT];           /* /trials rows of task t, all attempts together */
byte rowkeys[NT];        /* bit a set: a row with attempt a (the Store's trial-key set) */
bool row_ok[NT];         /* status of task t's first row is ok */
byte orph;               /* /metrics rows past the last /trials row (Store.cpp load_writer_state) */
byte decided[NC];        /* /events verified (1) or rolled_back (2) of candidate c */
bool stopreq;            /* RESULTS.stop, the stop request `flotilla cancel` leaves (stop_request_path) */

/* jobs_dir (Submitter add_job, try_submit; JobFolder.cpp) and Slurm itself */
bool jdir[NJ];           /* the job's folder with manifest.json */
bool jidf[NJ];           /* its job id on disk: the journal's submitted line (or slurm_job_id) */
byte jcfg[NJ];           /* the configuration its manifest's commands were rendered from */
byte jtask[NJ * NT];     /* manifest.json: attempt + 1 of task t in job j, 0 if not in it */
byte jres[NJ * NT];      /* results.h5: 0 no row, 1 ok, 2 failed (appended by rank 0) */
mtype jst[NJ] = NONE;    /* the job as slurmctld reports it */
bool zomb[NJ];           /* Slurm marked it ended, its ranks are still being killed (KillWait) */

/* ---------------------------------------------------------------- volatile state --------- */
/* The scheduler's memory, lost with it (CampaignRunner and the Slurm backend's parts). */
byte memcfg;             /* m_candidates' configuration */
bool memdec[NC];         /* m_decided */
byte pend[NT];           /* TaskLedger's pending: attempt + 1 of task t, 0 if not pending */
byte pjob[NT];           /* where it waits: 0 m_unsent, j + 1 the m_jobs entry of job j */
bool owned[NJ];          /* m_jobs holds job j */
bool known[NJ];          /* m_earlier_jobs: job j of an earlier run, still active at the scan */
bool retired[NJ];        /* dropped by retire_reported(): every task it was followed for reported */
byte early[NT];          /* m_earlier_results: j + 1 of the ended earlier job whose result of t is kept */
byte adopt[NT];          /* m_adoptable: j + 1 of the active earlier job that holds t */
byte nxt[NT];            /* m_next_attempt: the attempt a resubmission of t gets at least */
byte rst[NT];            /* m_ready, then the vector collect() returned: ST_* of t's result, 0 none */
byte ratt[NT];           /*   its attempt */
byte rcfg[NT];           /*   the configuration it ran with (its job's) */
byte gst[NT];            /* the open Store::Group's trial row of task t: 0 none, 1 ok, 2 failed */
byte gatt[NT];
byte gcfg[NT];
byte g_stop;             /* Campaign.cpp g_stop: 0, 1 SIGINT, 2 SIGINT under --cancel-on-interrupt */
bool collected;          /* collect() has returned rst[], record() has not run yet */

/* ---------------------------------------------------------------- the environment -------- */
bool crash_req;          /* SIGKILL of the scheduler, delivered before its next step */
byte stops;              /* SIGKILLs, SIGINTs and `flotilla cancel`s so far */
byte faults;             /* job faults so far */
bool cancelling;         /* `flotilla cancel` wrote its stop request and has yet to scancel */
bool done;               /* campaign_finished: the campaign loop returned its stop reason */

/* a stop the campaign loop obeys: g_stop || stop_requested() */
#define STOPPING (g_stop != 0 || stopreq)

/* candidate c from its durable trials (Analysis.cpp summarize_candidate): verified when all its
 * shards passed, rolled back as soon as one failed */
#define SHARD_OK(t) ((t) >= NT || (nrow[t] > 0 && row_ok[t]))
#define SHARD_FAILED(t) ((t) < NT && nrow[t] > 0 && !row_ok[t])
#define VERIFIED(c) (SHARD_OK(2 * (c)) && SHARD_OK(2 * (c) + 1))
#define ROLLED_BACK(c) (SHARD_FAILED(2 * (c)) || SHARD_FAILED(2 * (c) + 1))
/* P2: a recorded decision agrees with the recorded trials */
#define DECISION_HOLDS(c) (decided[c] == 0 || (decided[c] == 1 && VERIFIED(c)) || (decided[c] == 2 && ROLLED_BACK(c)))

#define IDLE ((pend[0] + pend[1] + pend[2] + rst[0] + rst[1] + rst[2]) == 0)   /* queued() + running() == 0 */
#define UNSENT ((pend[0] != 0 && pjob[0] == 0) || (pend[1] != 0 && pjob[1] == 0) || (pend[2] != 0 && pjob[2] == 0))

/* ---------------------------------------------------------------- the backend ------------ */

/* TaskLedger::take(): a worker's result, returned once, if its task waits for one at the
 * result's attempt. Called for every row a results.h5 read returns, again and again: the
 * streaming reads (read_new_results, read_running), finish() reading every file once more, a
 * reader reopened after an error ("results are matched by id, so reading again never doubles"). */
inline read_results(J) {
  for (t : 0 .. NT - 1) {
    if
    :: jres[IX(J, t)] != 0 && jtask[IX(J, t)] != 0 && pend[t] == jtask[IX(J, t)] ->
       assert(rst[t] == 0);
       rst[t] = jres[IX(J, t)]; ratt[t] = pend[t] - 1; rcfg[t] = jcfg[J]; pend[t] = 0
#ifdef MUTANT_INGEST_NOT_IDEMPOTENT
    /* a row read again is returned again (no "already returned" check in take()) */
    :: jres[IX(J, t)] != 0 && jtask[IX(J, t)] != 0 && pend[t] == 0 && rst[t] == 0 ->
       rst[t] = jres[IX(J, t)]; ratt[t] = jtask[IX(J, t)] - 1; rcfg[t] = jcfg[J]
#endif
    :: else -> skip
    fi
  }
  t = 0
}

/* TaskLedger::finish(): the job's recorded results, then each of its other followed tasks as
 * `ST` (lost when the job ended, cancelled by cancel_all); the job leaves m_jobs. */
inline finish(J, ST) {
#ifndef MUTANT_REQUEUE_BEFORE_RESULT_CHECK
  read_results(J);
#endif
  for (t : 0 .. NT - 1) {
    if
    :: pend[t] != 0 && pjob[t] == J + 1 ->
       /* P7: declared lost only when its results file holds no result of that attempt */
       assert(!(jres[IX(J, t)] != 0 && jtask[IX(J, t)] == pend[t]));
       assert(rst[t] == 0);
       rst[t] = ST; ratt[t] = pend[t] - 1; rcfg[t] = jcfg[J]; pend[t] = 0; pjob[t] = 0
    :: else -> skip
    fi
  }
  t = 0;
#ifdef MUTANT_REQUEUE_BEFORE_RESULT_CHECK
  read_results(J);   /* too late: its tasks were declared lost and wait no more */
#endif
  owned[J] = false;
  if :: jst[J] != NONE && !LIVE(J) -> jst[J] = GONE :: else -> skip fi
}

/* SlurmBackend::submit() -> Restart::take_earlier_result(): the attempt is raised to m_next_attempt; a
 * result an ended earlier job recorded for that attempt is taken as it is; a task an active
 * earlier job holds is followed in that job (the job becomes an m_jobs entry); anything else
 * waits in m_unsent for the next job. Leaves c at 0. */
inline submit(T, A) {
  c = A;
#ifndef MUTANT_NO_NEXT_ATTEMPT
  if :: nxt[T] > c -> c = nxt[T] :: else -> skip fi;
#endif
  if
#ifdef FIX_RESUME_ATTEMPTS
  :: early[T] != 0 ->   /* fix: the earlier job's result, whatever its attempt */
     assert(rst[T] == 0);
     rst[T] = jres[IX(early[T] - 1, T)]; ratt[T] = jtask[IX(early[T] - 1, T)] - 1; rcfg[T] = jcfg[early[T] - 1];
     early[T] = 0
#else
  :: early[T] != 0 && jtask[IX(early[T] - 1, T)] == c + 1 ->
     assert(rst[T] == 0);
     rst[T] = jres[IX(early[T] - 1, T)]; ratt[T] = c; rcfg[T] = jcfg[early[T] - 1]; early[T] = 0
#endif
  :: else ->
#ifdef PROMISE_REATTACH
     /* docs/slurm.md: "If an earlier job's results.h5 already holds a task's result, that
      * result is taken as it is." */
     assert(early[T] == 0);
#endif
     if
     :: adopt[T] != 0 ->
#ifdef PROMISE_REATTACH
        /* "the task is followed in that job": at the attempt the job runs it with */
        assert(jtask[IX(adopt[T] - 1, T)] == c + 1);
#endif
        owned[adopt[T] - 1] = true;
        pend[T] = c + 1;
        pjob[T] = adopt[T]; adopt[T] = 0
     :: else -> pend[T] = c + 1; pjob[T] = 0
     fi
  fi;
  c = 0
}

/* collect() -> make_jobs() / add_job() / write_job_folder(): one fresh folder with manifest.json
 * for the tasks in m_unsent (one resource set: one job). Leaves j at the new job. */
inline make_jobs() {
  j = 0;
  do :: j < NJ && jdir[j] -> j++ :: else -> break od;
  assert(j < NJ);   /* the model's bound on job folders (NJ) suffices */
  jdir[j] = true; jcfg[j] = memcfg; owned[j] = true;
  for (t : 0 .. NT - 1) {
    if :: pend[t] != 0 && pjob[t] == 0 -> jtask[IX(j, t)] = pend[t]; pjob[t] = j + 1 :: else -> skip fi
  }
  t = 0
}

/* collect() -> submit_waiting() -> try_submit(): sbatch takes the job (Slurm knows it, the
 * Job's slurm_id is set); the journal's submitted line names it in the next step. */
inline sbatch(J) {
  /* P6: no (task, attempt) runs in two jobs at once: a job is submitted with (t, a) only while
   * no other job that holds (t, a) is active or still has ranks (KillWait). Two runs of one
   * attempt would write the same per-attempt files (a suite's report shard-I.aA.*). With
   * PROMISE_REATTACH: in no other submitted job at all (docs/slurm.md, the slurm tests) */
  for (t : 0 .. NT - 1) {
    for (n : 0 .. NJ - 1) {
#ifdef PROMISE_REATTACH
      assert(n == J || jtask[IX(J, t)] == 0 || jst[n] == NONE || jtask[IX(n, t)] != jtask[IX(J, t)])
#else
      assert(n == J || jtask[IX(J, t)] == 0 || !(LIVE(n) || zomb[n]) || jtask[IX(n, t)] != jtask[IX(J, t)])
#endif
    }
  }
  t = 0; n = 0;
  jst[J] = PENDING
}

/* collect() -> poll() (and read_running() between polls): one query; an ended job is finished
 * (its results, the rest lost), a running one has its new results read. Then
 * retire_reported(): a submitted job none of whose followed tasks waits any more is dropped and
 * left to end by itself. */
inline poll() {
  for (j : 0 .. NJ - 1) {
    if
    :: owned[j] && jst[j] != NONE && TERMINAL(jst[j]) -> finish(j, ST_LOST)
    :: owned[j] && jst[j] == RUNNING -> read_results(j)
    :: else -> skip
    fi
  }
  for (j : 0 .. NJ - 1) {
    n = 0;
    for (t : 0 .. NT - 1) { if :: pend[t] != 0 && pjob[t] == j + 1 -> n++ :: else -> skip fi }
    if :: owned[j] && jst[j] != NONE && n == 0 -> owned[j] = false; retired[j] = true :: else -> skip fi
  }
  j = 0; n = 0; t = 0
}

/* SlurmBackend::cancel_all(): the unsent tasks, then each job followed: scancel (if submitted),
 * finish() with the rest cancelled */
inline cancel_all() {
  for (t : 0 .. NT - 1) {
    if :: pend[t] != 0 && pjob[t] == 0 -> rst[t] = ST_CANCELLED; ratt[t] = pend[t] - 1; pend[t] = 0
    :: else -> skip fi
  }
  for (j : 0 .. NJ - 1) {
    if
    :: owned[j] ->
       if
       :: jst[j] == RUNNING -> jst[j] = CANCELLED; zomb[j] = true
       :: jst[j] == PENDING -> jst[j] = CANCELLED
       :: else -> skip
       fi;
       finish(j, ST_CANCELLED)
    :: else -> skip
    fi
  }
  j = 0; t = 0
}

/* ---------------------------------------------------------------- the campaign ----------- */

/* Campaign.cpp record(): one Store::Group for everything one collect() returned. What to do with
 * each result touches only memory (and the backend: requeue() -> submit()); then Group::commit()
 * -> Store.cpp commit_pending() appends /metrics (here, at the end of this step), then /trials
 * (commit_rows), each flushed. Leaves t at the group's first trial row (NT: none). */
inline record() {
#ifdef MUTANT_SUBMIT_BEFORE_COMMIT
  if :: cands == 0 -> cands = memcfg :: else -> skip fi;   /* the candidates' group commits only now */
#endif
  for (t : 0 .. NT - 1) {
    if
    :: rst[t] == 0 -> skip
    /* cancelled (or lost while stopping) is not a result: the task runs again on resume */
    :: rst[t] == ST_CANCELLED || (rst[t] == ST_LOST && STOPPING) -> rst[t] = 0; ratt[t] = 0; rcfg[t] = 0
    /* Ingest.cpp should_requeue(): lost, and max_attempts allows another: requeue() submits it
     * as its next attempt; submit() may take an earlier job's result into m_ready for the next
     * collect() */
    :: rst[t] == ST_LOST && !STOPPING && ratt[t] + 1 < MA ->
       n = ratt[t] + 1; rst[t] = 0; ratt[t] = 0; rcfg[t] = 0;
#ifndef MUTANT_LOST_DROPPED
       submit(t, n);
#endif
       n = 0
    /* Ingest.cpp to_trial_record() (a lost task with no attempt left is a failed trial) and
     * Store::add_trial(): false, writing nothing, when the trial key is already held */
    :: else ->
#ifndef MUTANT_INGEST_NOT_IDEMPOTENT
       if
       :: (rowkeys[t] & (1 << ratt[t])) != 0 || (gst[t] != 0 && gatt[t] == ratt[t]) -> skip
       :: else ->
#endif
          gst[t] = (rst[t] == ST_OK -> 1 : 2); gatt[t] = ratt[t]; gcfg[t] = rcfg[t]
#ifndef MUTANT_INGEST_NOT_IDEMPOTENT
       fi
#endif
       ;
       rst[t] = 0; ratt[t] = 0; rcfg[t] = 0
    fi
  }
#ifdef MUTANT_DECIDE_BEFORE_COMMIT
  /* record_decisions() run inside the group, its events flushed at once */
  for (c : 0 .. NC - 1) {
    if
    :: !memdec[c] && (gst[2 * c] == 2 || ((2 * c + 1) < NT && gst[2 * c + 1] == 2)) ->
       decided[c] = 2; memdec[c] = true
    :: else -> skip
    fi
  }
  c = 0;
#endif
  n = 0;
  for (t : 0 .. NT - 1) { if :: gst[t] != 0 -> n++ :: else -> skip fi }
  orph = orph + n;   /* /metrics: the group's metric rows (one per trial here), one append */
  t = 0;
  do :: t < NT && gst[t] == 0 -> t++ :: else -> break od;
  n = 0;
  collected = false
}

/* commit_pending(), continued: the group's /trials rows (a crash may leave any prefix:
 * Store.cpp cuts the rows a killed write left unwritten) */
inline commit_rows() {
  do
  :: d_step {
       t < NT;
       /* P5: the metric rows past the last trial row are exactly those of this group's rows
        * still to come: no half record from a crash */
       n = 0;
       for (c : t .. NT - 1) { if :: gst[c] != 0 -> n++ :: else -> skip fi }
       assert(orph == n);
       /* P4: the trial is recorded for the configuration that ran */
       assert(gcfg[t] == cands);
       if :: nrow[t] == 0 -> row_ok[t] = (gst[t] == 1) :: else -> skip fi;
       nrow[t]++;
       rowkeys[t] = rowkeys[t] | (1 << gatt[t]);
       orph--;
       /* P1: a task's result is recorded at most once (over all its attempts) */
       assert(nrow[t] <= 1);
       gst[t] = 0; gatt[t] = 0; gcfg[t] = 0;
       t++;
       do :: t < NT && gst[t] == 0 -> t++ :: else -> break od;
       c = 0; n = 0
     }
  :: d_step { t >= NT; t = 0 } -> break
  od
}

/* record_decisions(): the verified / rolled_back event of a decided candidate, once */
inline decide(C) {
  d_step {
    if
    :: (VERIFIED(C) || ROLLED_BACK(C)) && !memdec[C] ->
       assert(decided[C] == 0);   /* P2: a decision is never made twice, never undone */
       decided[C] = (VERIFIED(C) -> 1 : 2); memdec[C] = true
    :: else -> skip
    fi
  }
}

/* P3: no job runs with no owner: each active job is followed (m_jobs), known from the scan
 * (m_earlier_jobs, followed as soon as one of its tasks is submitted), or retired with every
 * task it was followed for reported. */
inline check_owners() {
  for (j : 0 .. NJ - 1) { assert(!LIVE(j) || owned[j] || known[j] || retired[j]) }
  j = 0
}

/* A SIGKILL (or the end of an interrupted run) leaves nothing of the scheduler's memory. */
inline wipe() {
  d_step {
    crash_req = false; g_stop = 0; memcfg = 0; collected = false;
    for (t : 0 .. NT - 1) {
      pend[t] = 0; pjob[t] = 0; early[t] = 0; adopt[t] = 0; nxt[t] = 0; rst[t] = 0; ratt[t] = 0; rcfg[t] = 0;
      gst[t] = 0; gatt[t] = 0; gcfg[t] = 0
    }
    for (j : 0 .. NJ - 1) {
      owned[j] = false; known[j] = false; retired[j] = false;
      if :: jst[j] != NONE && !LIVE(j) -> jst[j] = GONE :: else -> skip fi
    }
    for (c : 0 .. NC - 1) { memdec[c] = false }
    t = 0; j = 0; c = 0; n = 0
  }
}

/* The start of a run: the SlurmBackend constructor and CampaignRunner::run() up to the batch. */
inline start_run() {
  /* SlurmBackend(): Restart::scan_earlier_jobs(), one query for every folder's job */
#ifndef MUTANT_NO_REATTACH
  for (j : 0 .. NJ - 1) {
    if
    :: jdir[j] ->
       /* no job id in the folder: submitted_by_hand() finds a job Slurm lists by its name */
       if :: !jidf[j] && jst[j] != NONE -> jidf[j] = true :: else -> skip fi;
       if
#ifdef MUTANT_STALE_JOB_ID
       /* the folder's job id is trusted as a finished job's: Slurm is not asked */
       :: jidf[j] ->
#else
       :: jidf[j] && LIVE(j) ->
          known[j] = true;
          for (t : 0 .. NT - 1) { if :: jtask[IX(j, t)] != 0 -> adopt[t] = j + 1 :: else -> skip fi }
       :: jidf[j] && !LIVE(j) ->
#endif
          /* read_job_folder_results(): ok and failed rows are kept (a later job's over an
           * earlier's); a task of the job with none kept runs again as its next attempt */
          for (t : 0 .. NT - 1) {
            if :: jtask[IX(j, t)] != 0 && jres[IX(j, t)] != 0 -> early[t] = j + 1 :: else -> skip fi;
            if :: jtask[IX(j, t)] != 0 && early[t] == 0 && nxt[t] < jtask[IX(j, t)] -> nxt[t] = jtask[IX(j, t)]
            :: else -> skip fi
          }
       :: else -> skip   /* written, never submitted: left alone, its tasks run again */
       fi
    :: else -> skip
    fi
  }
  t = 0; j = 0;
#endif
  /* run(): Store::open_for_append(): load_writer_state() cuts the metrics of a trial row
   * that was never written; the resume reads m_decided from /events; a stop request no
   * run obeyed is removed */
#ifndef MUTANT_HALF_RECORD
  orph = 0;
#endif
  stopreq = false;
  for (c : 0 .. NC - 1) {
    assert(DECISION_HOLDS(c));   /* P2, on what the killed run left */
    memdec[c] = (decided[c] != 0)
  }
  c = 0;
}

/* add_candidates()'s group commit, then run_phase(): missing_indices() (Planning.cpp): the
 * tasks with no trial of any attempt, submitted with attempt 0 (make_task) */
inline add_and_run_phase() {
#ifndef MUTANT_SUBMIT_BEFORE_COMMIT
  cands = memcfg;
#endif
  for (t : 0 .. NT - 1) {
    if
#ifdef MUTANT_MISSING_PER_ATTEMPT
    :: (rowkeys[t] & 1) == 0 -> submit(t, 0)   /* "missing" judged by the attempt-0 key */
#else
    :: nrow[t] == 0 -> submit(t, 0)
#endif
    :: else -> skip
    fi
  }
  t = 0
}

active proctype Scheduler() {
  byte t, j, c, n;
  do
  :: !done ->
     {
       /* add_candidates(): the batch in one group, committed before any of its tasks reaches a
        * backend; its configuration is the recorded one, else the strategy's. The first run's
        * is configuration 1 (the two are alike to everything else); a run that finds no batch
        * recorded after an earlier one (killed before its commit) may get either: seed,
        * strategy and batch may change on resume */
       if
       :: d_step { cands != 0; start_run(); memcfg = cands; add_and_run_phase() }
       :: d_step { cands == 0; start_run(); memcfg = 1; add_and_run_phase() }
       :: d_step { cands == 0 && stops > 0; start_run(); memcfg = 2; add_and_run_phase() }
       fi;
       /* run_tasks(): until every submitted task has come back; a stop is checked first */
       do
       :: d_step { IDLE && !collected } -> break
       /* collect(): make_jobs() wrote a folder; submit_waiting(): Slurm takes the job, then
        * its journal names it (a SIGKILL may fall in between); then poll() */
       :: d_step { !IDLE && !collected && !STOPPING && UNSENT; check_owners(); make_jobs() }
          d_step { sbatch(j) }
          d_step { jidf[j] = true; j = 0 }
          d_step { poll(); collected = true }
       :: d_step { !IDLE && !collected && !STOPPING && !UNSENT; check_owners(); poll(); collected = true }
       /* record() and its group's commit; a signal may have come since the loop looked */
       :: d_step { collected; record() }
          commit_rows()
       /* SIGINT, or `flotilla cancel`'s stop request */
       :: d_step { !IDLE && !collected && STOPPING; check_owners() } ->
          if
          :: g_stop == 2 ->
             /* --cancel-on-interrupt: cancel_all(), record what came back */
             d_step { cancel_all(); record(); if :: g_stop == 0 -> stopreq = false :: else -> skip fi }
             commit_rows()
          :: else ->
             /* Slurm jobs outlive us: record(collect(0)), then detach() */
             if
             :: d_step { UNSENT; make_jobs() }
                d_step { sbatch(j) }
                d_step { jidf[j] = true; j = 0 }
             :: d_step { !UNSENT }
             fi;
             d_step { poll(); record(); if :: g_stop == 0 -> stopreq = false :: else -> skip fi }
             commit_rows()
          fi;
          /* Interrupted (exit 130), or Cancelled (exit 4), which removes the stop request (the
           * next run removes one left behind, so when it goes does not matter) */
          goto stopped
       od;
#ifdef FIX_STOP_CHECK
       /* the candidate fix: run_tasks() looks for a stop once more when its loop ends */
       if
       :: d_step { STOPPING; if :: g_stop == 0 -> stopreq = false :: else -> skip fi }; goto stopped
       :: else -> skip
       fi;
#endif
       /* evaluate() -> run_test_gates(), record_decisions() */
       decide(0);
       decide(1);
#if !defined(FINAL_PHASE) && !defined(FIX_STOP_CHECK)
       /* a stop run_tasks() let pass (a lost result dropped while stopping can leave it nothing
        * to wait for, and its loop ends without looking) is obeyed by the next run_tasks() that
        * has something to submit: another wave, the next phase or round. FINAL_PHASE: there is
        * none, this was the campaign's last phase */
       if
       :: d_step { STOPPING; if :: g_stop == 0 -> stopreq = false :: else -> skip fi }; goto stopped
       :: else -> skip
       fi;
#endif
       /* campaign_finished */
       d_step {
         for (t : 0 .. NT - 1) { assert(nrow[t] == 1) }   /* P1: every task recorded, once */
         for (c : 0 .. NC - 1) { assert(decided[c] != 0 && DECISION_HOLDS(c)) }   /* P2 */
         /* P3 at the end: a job left running holds only recorded tasks */
         for (j : 0 .. NJ - 1) {
           for (t : 0 .. NT - 1) { assert(!LIVE(j) || jtask[IX(j, t)] == 0 || nrow[t] == 1) }
         }
         t = 0; j = 0; c = 0;
         done = true
       };
stopped:
       skip
     } unless { crash_req };
     wipe()   /* the run ended (interrupted, cancelled) or was killed: `flotilla run` again */
  :: done -> break
  od
}

/* ---------------------------------------------------------------- Slurm and the workers -- */

#define HAS(J, T) (jtask[IX(J, T)] != 0)
#define ALL_REPORTED(J) ((!HAS(J, 0) || jres[IX(J, 0)] != 0) && (!HAS(J, 1) || jres[IX(J, 1)] != 0) && \
                         (!HAS(J, 2) || jres[IX(J, 2)] != 0))
/* a job that ends in state S. The scheduler reacts to every end state alike (is_terminal():
 * finish() takes the recorded results and declares the rest lost; the zombie window is zomb[]),
 * so the model records GONE for all of them, which keeps equivalent states equal; each end
 * state is still a transition of its own. KEEP_END_STATES keeps them apart while a scheduler
 * follows the job; MUTANT_WAIT_ON_ENDED keeps PREEMPTED apart (the state it mistakes). */
#if defined(KEEP_END_STATES)
#define END_AS(J, S) (owned[J] -> S : GONE)
#elif defined(MUTANT_WAIT_ON_ENDED)
#define END_AS(J, S) ((owned[J] && (S) == PREEMPTED) -> PREEMPTED : GONE)
#else
#define END_AS(J, S) GONE
#endif
#define END(J, S) jst[J] = END_AS(J, S); known[J] = false; retired[J] = false

/* rank 0 of flotilla-worker appends a result to results.h5: ok, or a failed exit code (task 0
 * only, unless ALL_FLAKY: every task may fail). Also once in the moment after Slurm marked the
 * job ended and before its ranks are killed (its writer thread's last append): that late result
 * ends the window. */
#ifdef ALL_FLAKY
#define FLAKY(T) true
#else
#define FLAKY(T) ((T) == 0)
#endif
#define RESULT(J, T) \
  :: d_step { jst[J] == RUNNING && HAS(J, T) && jres[IX(J, T)] == 0 -> jres[IX(J, T)] = 1 } \
  :: d_step { jst[J] == RUNNING && HAS(J, T) && jres[IX(J, T)] == 0 && FLAKY(T) -> jres[IX(J, T)] = 2 } \
  :: d_step { zomb[J] && HAS(J, T) && jres[IX(J, T)] == 0 -> zomb[J] = false; jres[IX(J, T)] = 1 } \
  :: d_step { zomb[J] && HAS(J, T) && jres[IX(J, T)] == 0 && FLAKY(T) -> zomb[J] = false; jres[IX(J, T)] = 2 }

#define JOB(J) \
  /* slurmctld starts it; job.sh's first line writes slurm_job_id */ \
  :: d_step { jst[J] == PENDING -> jst[J] = RUNNING; jidf[J] = true } \
  RESULT(J, 0) RESULT(J, 1) RESULT(J, 2) \
  /* every task reported: the worker's MPI_Finalize, srun and the script exit 0 */ \
  :: d_step { jst[J] == RUNNING && ALL_REPORTED(J) -> END(J, COMPLETED) } \
  /* a rank died: the MPI job ends, srun and the batch script fail */ \
  :: d_step { faults < MAXFAULT && jst[J] == RUNNING -> faults++; END(J, FAILED) } \
  :: d_step { faults < MAXFAULT && jst[J] == RUNNING -> faults++; END(J, TIMEOUT); zomb[J] = true } \
  :: d_step { faults < MAXFAULT && jst[J] == RUNNING -> faults++; END(J, NODE_FAIL); zomb[J] = true } \
  :: d_step { faults < MAXFAULT && jst[J] == RUNNING -> faults++; END(J, PREEMPTED); zomb[J] = true } \
  /* a user's scancel, running or pending */ \
  :: d_step { faults < MAXFAULT && jst[J] == RUNNING -> faults++; END(J, CANCELLED); zomb[J] = true } \
  :: d_step { faults < MAXFAULT && jst[J] == PENDING -> faults++; END(J, CANCELLED) } \
  /* KillWait over: the last rank is gone */ \
  :: d_step { zomb[J] -> zomb[J] = false }

active proctype Slurm() {
end:
  do
  JOB(0)
#if NJ > 1
  JOB(1)
#endif
#if NJ > 2
  JOB(2)
#endif
#if NJ > 3
  JOB(3)
#endif
#if NJ > 4
  JOB(4)
#endif
#if NJ > 5
  JOB(5)
#endif
#if NJ > 6
  JOB(6)
#endif
#if NJ > 7
  JOB(7)
#endif
  od
}

/* ---------------------------------------------------------------- crashes and interrupts - */

/* `flotilla cancel` (cli/src/SlurmCommands.cpp cancel_command): the stop request, then a
 * scancel of every active job its folder names */
inline scancel_all() {
  for (j : 0 .. NJ - 1) {
    if
    :: jidf[j] && jst[j] == RUNNING -> END(j, CANCELLED); zomb[j] = true
    :: jidf[j] && jst[j] == PENDING -> END(j, CANCELLED)
    :: else -> skip
    fi
  }
  j = 0
}

active proctype Chaos() {
  byte j;
end:
  do
  :: atomic { stops < MAXSTOP && !done && !crash_req -> stops++; crash_req = true }              /* SIGKILL */
  :: atomic { stops < MAXSTOP && !done && !crash_req && g_stop == 0 -> stops++; g_stop = 1 }     /* SIGINT */
  :: atomic { stops < MAXSTOP && !done && !crash_req && g_stop == 0 -> stops++; g_stop = 2 }     /* SIGINT, --cancel-on-interrupt */
  :: atomic { stops < MAXSTOP && !done && !crash_req && !stopreq && !cancelling ->
              stops++; stopreq = true; cancelling = true }                                          /* flotilla cancel */
  :: d_step { cancelling -> scancel_all(); cancelling = false }
  od
}

#ifdef LIVENESS
/* progress under weak fairness (pan -a -f): with crashes and faults bounded, the campaign
 * finishes */
ltl finishes { <> done }
#endif
