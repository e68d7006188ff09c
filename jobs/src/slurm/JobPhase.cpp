// JobPhase.cpp — the job lifecycle's transitions (pure) and its journal (JobPhase.h).
#include "flotilla/jobs/JobPhase.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace flotilla::jobs {
namespace {

constexpr std::array<std::pair<JobPhase, std::string_view>, 7> kPhases{{{JobPhase::written, "written"},
                                                                        {JobPhase::queued, "queued"},
                                                                        {JobPhase::running, "running"},
                                                                        {JobPhase::orphaned, "orphaned"},
                                                                        {JobPhase::retired, "retired"},
                                                                        {JobPhase::ended, "ended"},
                                                                        {JobPhase::cancelled, "cancelled"}}};
constexpr std::array<std::pair<JobEvent, std::string_view>, 12> kEvents{{{JobEvent::submitted, "submitted"},
                                                                         {JobEvent::allocated, "allocated"},
                                                                         {JobEvent::deferred, "deferred"},
                                                                         {JobEvent::launching, "launching"},
                                                                         {JobEvent::seen_pending, "seen_pending"},
                                                                         {JobEvent::seen_running, "seen_running"},
                                                                         {JobEvent::seen_ended, "seen_ended"},
                                                                         {JobEvent::all_reported, "all_reported"},
                                                                         {JobEvent::launcher_lost, "launcher_lost"},
                                                                         {JobEvent::cancelled, "cancelled"},
                                                                         {JobEvent::detached, "detached"},
                                                                         {JobEvent::reattached, "reattached"}}};

// The transition, or nullopt when the event cannot happen in that phase.
std::optional<JobPhase> transition(JobPhase phase, JobEvent event) {
  using P = JobPhase;
  using E = JobEvent;
  if (phase == P::ended) return event == E::seen_ended ? std::optional(P::ended) : std::nullopt;
  if (phase == P::cancelled)  // queries may still see it until Slurm has ended it
    return event == E::seen_pending || event == E::seen_running || event == E::seen_ended || event == E::cancelled
               ? std::optional(P::cancelled)
               : std::nullopt;
  if (event == E::cancelled) return P::cancelled;
  if (event == E::detached) return phase;  // the job keeps its phase; the journal says who left
  switch (phase) {
    case P::written:
      if (event == E::submitted) return P::queued;
      if (event == E::allocated) return P::running;
      if (event == E::deferred || event == E::launching) return P::written;
      return std::nullopt;
    case P::queued:
      if (event == E::seen_pending || event == E::reattached) return P::queued;
      if (event == E::seen_running) return P::running;
      if (event == E::seen_ended) return P::ended;
      if (event == E::all_reported) return P::retired;  // re-attached tasks whose results came from the folder
      return std::nullopt;
    case P::running:
      // An array whose other elements are still pending shows both: it is running.
      if (event == E::seen_pending || event == E::seen_running || event == E::reattached) return P::running;
      if (event == E::seen_ended) return P::ended;
      if (event == E::all_reported) return P::retired;
      if (event == E::launcher_lost) return P::orphaned;
      return std::nullopt;
    case P::orphaned:
      if (event == E::seen_pending || event == E::seen_running || event == E::reattached) return P::orphaned;
      if (event == E::seen_ended) return P::ended;
      if (event == E::all_reported) return P::retired;
      return std::nullopt;
    case P::retired:
      // A restarted scheduler may follow a retired job again for tasks whose results it never
      // recorded: they are in the job's files, and the job stays retired.
      if (event == E::seen_pending || event == E::seen_running || event == E::reattached || event == E::all_reported)
        return P::retired;
      if (event == E::seen_ended) return P::ended;
      if (event == E::launcher_lost) return P::orphaned;  // an allocation nobody will release
      return std::nullopt;
    default: return std::nullopt;
  }
}

// What a line says of the job's Slurm id: submitted and allocated name the job that holds the
// tasks; launching names an allocation that is settled by the next of those, or by deferred
// (its launcher did not start and it was cancelled).
void read_job_id(JournalReplay& replay, JobEvent event, std::string_view detail) {
  const auto id = slurm_id_of_detail(detail);
  if (event == JobEvent::launching && id) replay.launching = *id;
  if (event == JobEvent::deferred) replay.launching = 0;
  if ((event == JobEvent::submitted || event == JobEvent::allocated) && id) {
    replay.slurm_id = *id;
    replay.allocated = event == JobEvent::allocated;
    replay.launching = 0;
  }
}

std::string_view trim_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  return line;
}

}  // namespace

std::string_view to_string(JobPhase phase) {
  for (const auto& [p, name] : kPhases)
    if (p == phase) return name;
  return "unknown";
}

std::string_view to_string(JobEvent event) {
  for (const auto& [e, name] : kEvents)
    if (e == event) return name;
  return "unknown";
}

std::optional<JobPhase> job_phase_from_string(std::string_view name) {
  for (const auto& [p, text] : kPhases)
    if (text == name) return p;
  return std::nullopt;
}

std::optional<JobEvent> job_event_from_string(std::string_view name) {
  for (const auto& [e, text] : kEvents)
    if (text == name) return e;
  return std::nullopt;
}

std::optional<std::uint32_t> slurm_id_of_detail(std::string_view detail) {
  for (std::string_view prefix : {"Slurm job ", "Slurm allocation "}) {
    if (!detail.starts_with(prefix)) continue;
    detail.remove_prefix(prefix.size());
    std::uint32_t id = 0;
    const auto [end, error] = std::from_chars(detail.data(), detail.data() + detail.size(), id);
    const bool whole = end == detail.data() + detail.size() || *end == ',' || *end == ' ';
    if (error == std::errc() && end != detail.data() && whole && id != 0) return id;
  }
  return std::nullopt;
}

bool is_final(JobPhase phase) { return phase == JobPhase::ended || phase == JobPhase::cancelled; }

JobPhase next(JobPhase phase, JobEvent event) {
  if (auto after = transition(phase, event)) return *after;
  throw IllegalTransition(fmt::format("event {} cannot happen to a job that is {}", to_string(event), to_string(phase)));
}

void append_job_event(const std::filesystem::path& job_dir, JobEvent event, JobPhase after, std::string_view detail) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string line = fmt::format("{:.3f} {} {}", now, to_string(event), to_string(after));
  if (!detail.empty()) line += ' ';
  for (char c : detail) line += (c == '\n' || c == '\r') ? ' ' : c;  // one line per event, always
  line += '\n';
  const auto path = job_dir / "events";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot open the job's journal: {}", path.string(), std::strerror(errno)));
  // One write of the whole line: O_APPEND keeps it whole against another writer, and a kill
  // leaves at most this line torn.
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int error = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    throw std::runtime_error(fmt::format("{}: cannot append to the job's journal: {}", path.string(),
                                         written < 0 ? std::strerror(error) : "short write"));
}

JournalReplay replay_job_journal(std::string_view text, std::string_view source) {
  JournalReplay replay;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {  // the writer was killed mid-line
      replay.torn_tail = true;
      break;
    }
    const std::string_view line = trim_line(text.substr(0, end));
    text.remove_prefix(end + 1);
    if (line.empty()) continue;
    std::istringstream fields{std::string(line)};
    std::string seconds, event_name, phase_name;
    fields >> seconds >> event_name >> phase_name;
    const auto event = job_event_from_string(event_name);
    const auto recorded = job_phase_from_string(phase_name);
    if (!event || !recorded)
      throw std::invalid_argument(fmt::format("{}:{}: not a job event: '{}'", source, number, line));
    JobPhase after;
    try {
      after = next(replay.phase, *event);
    } catch (const IllegalTransition& e) {
      throw std::invalid_argument(fmt::format("{}:{}: {}", source, number, e.what()));
    }
    if (after != *recorded)
      throw std::invalid_argument(fmt::format("{}:{}: event {} leads from {} to {}, not {}", source, number, event_name,
                                              to_string(replay.phase), to_string(after), phase_name));
    replay.phase = after;
    ++replay.events;
    std::string detail;
    std::getline(fields >> std::ws, detail);
    read_job_id(replay, *event, detail);
  }
  return replay;
}

std::optional<JournalReplay> read_job_journal(const std::filesystem::path& job_dir) {
  const auto path = job_dir / "events";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return replay_job_journal(text.str(), path.string());
}

}  // namespace flotilla::jobs
