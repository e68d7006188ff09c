// JobPhase.h — the lifecycle of one Slurm job of a campaign, as an explicit state machine.
//
// A job's phase changes only through next(phase, event), a pure function that refuses an
// illegal transition; every change is appended to the job's journal (DIR/events, one line per
// event), which a restarted scheduler replays to know what became of the job while nobody
// watched, as flux-core's job-manager replays a job's eventlog.
//
//   written ──submitted──▶ queued ──seen_running──▶ running ──all_reported──▶ retired
//      │  ▲                  │                         │                         │
//      │  └─deferred,        └────────seen_ended───────┼──────▶ ended ◀──────────┘
//      │    launching                                  │          ▲
//      └──allocated (an allocation made at once) ──────┘          │
//   running ──launcher_lost──▶ orphaned (flotilla cancelled it) ──┘ seen_ended
//   any phase but ended ──cancelled──▶ cancelled;   detached / reattached: the owner left / came back
//   (a restarted scheduler re-attaches to queued, running, orphaned and retired jobs alike)
//
// ended and cancelled are final: nothing of the job runs any more, and every task it did not
// report is given back to the campaign (lost, or cancelled). docs/architecture.md has the table.
//
// The journal is the record of which Slurm job holds the folder's tasks: the detail of
// `submitted` starts with "Slurm job ID", that of `launching` and `allocated` with "Slurm
// allocation ID", and replay reads the id back (JournalReplay::slurm_id).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flotilla::jobs {

enum class JobPhase {
  written,    // its folder and manifest exist; not in Slurm (yet, or after a refusal for now)
  queued,     // submitted: PENDING in Slurm
  running,    // an element is RUNNING; results are read as they come
  orphaned,   // its launcher died before releasing the allocation: flotilla cancelled it
  retired,    // every task reported; Slurm may still show it until it ends by itself
  ended,      // Slurm saw it end (or forgot it): final
  cancelled,  // cancelled by flotilla or `flotilla cancel`: final
};

enum class JobEvent {
  submitted,      // sbatch / the API accepted it
  allocated,      // an allocation made at once, its launcher started
  deferred,       // refused for now (a submit limit), or its allocation's launcher did not start: tried again later
  launching,      // an allocation made at once; its launcher is being started (nothing runs in it yet)
  seen_pending,   // a query saw it pending
  seen_running,   // a query saw an element running
  seen_ended,     // a query saw every element end, or the job gone from the queue
  all_reported,   // every task it holds has a result
  launcher_lost,  // its allocation's launcher is gone (flotilla cancels the allocation)
  cancelled,      // flotilla cancelled it
  detached,       // the scheduler left it running (Ctrl-C): nobody watches until a restart
  reattached,     // a restarted scheduler follows it again
};

std::string_view to_string(JobPhase phase);
std::string_view to_string(JobEvent event);
std::optional<JobPhase> job_phase_from_string(std::string_view name);
std::optional<JobEvent> job_event_from_string(std::string_view name);

bool is_final(JobPhase phase);

class IllegalTransition : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// The phase after `event`; throws IllegalTransition ("job J: event E in phase P") for an event
// that cannot happen in that phase (a bug, or a journal that is not ours).
JobPhase next(JobPhase phase, JobEvent event);

// The journal, DIR/events: "SECONDS EVENT PHASE-AFTER [DETAIL]" lines, appended and flushed one
// at a time (O_APPEND), so a scheduler killed at any moment leaves whole lines behind but
// perhaps a torn last one.
void append_job_event(const std::filesystem::path& job_dir, JobEvent event, JobPhase after, std::string_view detail = {});

struct JournalReplay {
  JobPhase phase = JobPhase::written;
  std::size_t events = 0;
  bool torn_tail = false;        // a last line without its newline (the writer was killed): ignored
  std::uint32_t slurm_id = 0;    // the job of the last `submitted` or `allocated`; 0: none named
  bool allocated = false;        // that was an allocation made at once, run by a launcher
  std::uint32_t launching = 0;   // an allocation `launching` named and nothing since settled (its
                                 // launcher may never have started); 0: none
};
// The Slurm job id a journal line's detail starts with ("Slurm job 812, found on restart",
// "Slurm allocation 813, launcher pid 9 on n1"); nullopt when it names none.
std::optional<std::uint32_t> slurm_id_of_detail(std::string_view detail);
// Replays a journal's text from `written`. Throws std::invalid_argument naming the source and
// line for a line that is not an event, or an event next() refuses.
JournalReplay replay_job_journal(std::string_view text, std::string_view source);
// The journal of a job folder; nullopt when it has none (a folder of an older flotilla).
std::optional<JournalReplay> read_job_journal(const std::filesystem::path& job_dir);

}  // namespace flotilla::jobs
