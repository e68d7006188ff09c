// Submitter.cpp — the Slurm backend's jobs from tasks, and their submission (Submitter.h).
#include "Submitter.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "JobFolder.h"
#include "JobRequests.h"
#include "PartitionAdvice.h"

namespace flotilla::jobs::slurm {

void Submitter::add(TaskSpec spec) {
  m_unsent[spec.resources].push_back(spec.id);
  m_parts.ledger.add(std::move(spec));
}

std::size_t Submitter::unsent() const {
  std::size_t n = 0;
  for (const auto& [resources, ids] : m_unsent) n += ids.size();
  return n;
}

void Submitter::finish_unsent(const std::string& reason, TaskStatus status) {
  for (auto& [resources, ids] : m_unsent) m_parts.ledger.finish(Job{.tasks = std::move(ids)}, reason, status);
  m_unsent.clear();
}

// One job per resource set of the tasks submitted since the last call, or, when its tasks name
// array elements, one job array per MaxArraySize elements.
void Submitter::make_jobs() {
  if (m_held) return;  // hold mode wrote its one job
  const auto& ledger = m_parts.ledger;
  std::vector<std::string> order;
  for (const auto& [resources, ids] : m_unsent)
    if (!ids.empty()) order.insert(ledger.spec(ids.front()).after.empty() ? order.begin() : order.end(), resources);
  for (const auto& resources : order) {
    auto ids = std::move(m_unsent[resources]);
    if (m_settings.hold && hold_existing(ids)) return;
    if (ledger.spec(ids.front()).array_index < 0) {
      add_job(resources, ids, nullptr);
      if (m_held) return;
      continue;
    }
    std::map<std::uint32_t, std::vector<std::uint64_t>> by_element;
    for (auto id : ids) by_element[static_cast<std::uint32_t>(std::max(0, ledger.spec(id).array_index))].push_back(id);
    std::vector<std::uint32_t> elements;
    for (const auto& [element, tasks] : by_element) elements.push_back(element);
    for (const auto& piece : plan_array_pieces(elements, max_array_size())) {
      std::vector<std::uint64_t> piece_ids;
      for (auto element : piece.elements)
        piece_ids.insert(piece_ids.end(), by_element[element].begin(), by_element[element].end());
      add_job(resources, piece_ids, &piece);
      if (m_held) return;
    }
  }
  m_unsent.clear();
}

void Submitter::add_job(const std::string& resources, const std::vector<std::uint64_t>& ids, const ArrayPiece* piece) {
  const auto& ledger = m_parts.ledger;
  auto folder = new_job_folder(m_settings.workdir, m_settings.job_prefix, m_counter);
  Job job{.name = folder.name,
          .resources = resources,
          .dir = folder.dir,
          .tasks = ids,
          .after = ledger.spec(ids.front()).after};
  std::vector<const TaskSpec*> specs;
  std::map<std::uint32_t, std::vector<std::size_t>> elements;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    specs.push_back(&ledger.spec(ids[i]));
    if (piece) elements[static_cast<std::uint32_t>(specs.back()->array_index) - piece->offset].push_back(i);
  }
  if (piece) job.array = piece->spec;
  for (const auto& [element, positions] : elements) {
    auto& tasks = job.file_tasks[job.dir / ("results-" + std::to_string(element) + ".h5")];
    for (auto i : positions) tasks.push_back(ids[i]);
  }
  write_job_folder(job.dir, job.name, specs, elements);
  if (m_settings.hold) return hold(job, job_request(job, m_settings, m_worker, ""));
  m_parts.ledger.jobs().push_back(std::move(job));  // submitted by submit_waiting()
}

std::uint32_t Submitter::max_array_size() {
  if (m_max_array_size == 0) m_max_array_size = m_parts.client.max_array_size();
  return m_max_array_size;
}

// With max_submit_jobs, the user's pending and running jobs are counted first (one query per
// pass, at most every poll interval while a job waits), so a site's MaxSubmitJobs is respected
// rather than hit.
void Submitter::submit_waiting() {
  std::optional<std::size_t> queued;
  for (auto& job : m_parts.ledger.jobs()) {
    if (job.slurm_id != 0 || Clock::now() < job.next_try) continue;
    auto dependency = dependency_of(job);
    if (!dependency) continue;
    // An array counts as its elements, as Slurm counts it against the limit.
    const std::size_t elements = job.array.empty() ? 1 : array_expression_size(job.array);
    if (m_settings.max_submit_jobs > 0) {
      if (!queued) queued = count_user_queued();
      const auto limit = static_cast<std::size_t>(m_settings.max_submit_jobs);
      // A job larger than the limit alone goes once nothing else is queued (Slurm decides).
      if (*queued > 0 && *queued + elements > limit) {
        job.next_try = Clock::now() + m_settings.poll_interval;
        continue;
      }
    }
    try_submit(job, *dependency);
    if (queued && job.slurm_id != 0) *queued += elements;
  }
}

// "afterok:ID:ID" on the active jobs of the resource set the job comes after; "" when none is
// active; nullopt while one of them waits to be submitted.
std::optional<std::string> Submitter::dependency_of(const Job& job) const {
  if (job.after.empty()) return std::string();
  std::string ids;
  for (const auto& other : m_parts.ledger.jobs()) {
    if (other.resources != job.after) continue;
    if (other.slurm_id == 0) return std::nullopt;
    ids += ":" + std::to_string(other.slurm_id);
  }
  return ids.empty() ? std::string() : "afterok" + ids;
}

std::size_t Submitter::count_user_queued() {
  std::size_t queued = 0;
  for (const auto& j : m_parts.client.user_jobs())
    if (!is_terminal(j.state)) queued += j.submit_count;
  return queued;
}

// `flotilla sbatch` run again before the folder it wrote was submitted: point at that folder.
bool Submitter::hold_existing(const std::vector<std::uint64_t>& ids) {
  for (const auto& [dir, tasks] : m_parts.unsubmitted)
    if (tasks == std::set<std::uint64_t>(ids.begin(), ids.end())) {
      m_held = HeldJob{dir, ids.size(), true};
      return true;
    }
  return false;
}

// Hold mode: the script is written beside the manifest, for a person to submit; nothing more is
// made or submitted, and the job's tasks stay queued.
void Submitter::hold(const Job& job, const JobRequest& request) {
  std::ofstream(job.dir / "job.sh") << render_job_script(request);
  m_held = HeldJob{job.dir, job.tasks.size(), false};
}

void Submitter::try_submit(Job& job, const std::string& dependency) {
  const auto request = job_request(job, m_settings, m_worker, dependency);
  if (m_settings.start == "allocate") {
    switch (m_parts.allocator.try_allocate(job, request, m_parts.poller.watching_released())) {
      case Allocator::Outcome::allocated:
        return;
      case Allocator::Outcome::wait:
        return defer_for_own(job);
      case Allocator::Outcome::batch:
        break;
    }
  }
  auto outcome = m_parts.client.submit(request);
  if (auto* ok = std::get_if<Submitted>(&outcome)) {
    job.slurm_id = ok->id;
    std::ofstream(job.dir / "job.sh") << render_job_script(request);  // what ran, for people
    // The journal is the record a restarted scheduler reads (JobPhase.h): "Slurm job ID".
    m_parts.journal.advance(job, JobEvent::submitted, fmt::format("Slurm job {}", ok->id));
    return;
  }
  const auto& rejected = std::get<SubmitRejected>(outcome);
  if (rejected.limit) {  // back off: 1, 2, 4 ... 30 s
    const auto wait = std::chrono::seconds(std::min(30, 1 << std::min(job.tries++, 5)));
    job.next_try = Clock::now() + wait;
    m_parts.journal.advance(job, JobEvent::deferred, rejected.message);
    // A partition that is not UP is named with its state, once: the partitions are one more query.
    const auto advice = job.tries == 1 && rejected.message.find("Required partition not available") != std::string::npos
                            ? "; " + refusal_advice(rejected.message, partitions(), request, job.resources)
                            : std::string();
    m_notice("slurm_submit_deferred", fmt::format("Slurm refused job {} for now ({}){}; trying again in {} s", job.name,
                                                  rejected.message, advice, wait.count()));
    return;
  }
  // Anything else (no such partition, a partition limit, Slurm unreachable) is a setup error, not
  // a trial result: recording it would burn the campaign's budget on failures that say nothing
  // about candidates. The message says which setting to change when Slurm's error tells.
  const auto advice = refusal_advice(rejected.message, partitions(), request, job.resources);
  throw std::runtime_error(fmt::format("Slurm refused job {} ({}): {}{}", job.name,
                                       (job.dir / "manifest.json").string(), rejected.message,
                                       advice.empty() ? "" : ". " + advice));
}

// The cluster's partitions, to explain a refusal; none when Slurm cannot say (its own message
// is then the whole story).
std::vector<PartitionLimits> Submitter::partitions() {
  try {
    return m_parts.client.partitions();
  } catch (const std::runtime_error&) {
    return {};
  }
}

void Submitter::defer_for_own(Job& job) {
  job.next_try = Clock::now() + std::chrono::milliseconds(20);
  m_parts.poller.poll_soon();  // see the ending allocations end as soon as they do
}

}  // namespace flotilla::jobs::slurm
