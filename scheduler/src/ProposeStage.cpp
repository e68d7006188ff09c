// ProposeStage.cpp — the proposers' runs and the judging of their files (ProposeStage.h).
#include "ProposeStage.h"

#include "Clock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "BuildInputs.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Command.h"
#include "flotilla/scheduler/Proposals.h"

namespace flotilla::scheduler {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxMetaBytes = 64 << 10;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 63 || name.front() == '.' || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

// A file of the out folder, read without following a link, within `limit` bytes.
ProposerRun::File read_out_file(const fs::path& path, std::size_t limit) {
  ProposerRun::File file{.name = path.filename().string()};
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return file.problem = "cannot be read", file;
  if (S_ISLNK(info.st_mode)) return file.problem = "is a symbolic link: a proposal is a file of its own", file;
  if (S_ISDIR(info.st_mode)) return file.problem = "is a folder: proposals are files in {out} itself", file;
  if (!S_ISREG(info.st_mode)) return file.problem = "is not a regular file", file;
  if (static_cast<std::size_t>(info.st_size) > limit)
    return file.problem = fmt::format("is {} bytes, more than the {} a proposal file may have", info.st_size, limit), file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return file.problem = "cannot be read", file;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) file.content.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return file;
}

std::string digest_or_empty(const fs::path& tree) {
  try {
    return fs::is_directory(tree) ? digest_build_inputs(tree, {"."}) : std::string();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

ProposeStage::ProposeStage(const Settings& settings, std::vector<fs::path> path_prepend)
    : m_s(settings),
      m_path_prepend(std::move(path_prepend)),
      // Absolute, as {tree} and {out} reach commands that run in campaign.workdir, which need not
      // be where flotilla started (and where a relative results path points).
      m_trees(settings.propose.tree, fs::absolute(settings.results).string() + ".trees", m_path_prepend) {}

fs::path ProposeStage::folder() const { return fs::absolute(m_s.results).string() + ".proposals"; }

std::uint64_t ProposeStage::seed(int round, int index) const {
  std::uint64_t z = m_s.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(round * 64 + index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;  // splitmix64's finaliser
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) >> 1;  // fits an int64 for JSON readers
}

std::vector<ProposerRun> ProposeStage::run(int round, const std::vector<int>& indices,
                                           const std::function<std::string(int)>& context_of,
                                           const std::function<bool()>& stopping,
                                           const std::vector<fs::path>& given) {
  const auto dir = folder() / fmt::format("r{}", round);
  fs::create_directories(dir);
  // What the proposers are given to read must be what they leave: the source tree and the copies
  // the context names (not every tree of the cache: a campaign of 1,000 candidates has hundreds).
  std::map<fs::path, std::string> watched;
  watched[m_s.propose.tree] = digest_or_empty(m_s.propose.tree);
  for (const auto& tree : given) watched[tree] = digest_or_empty(tree);
  std::vector<jobs::TaskSpec> specs;
  for (int index : indices) {
    const auto out = dir / fmt::format("out{}", index);
    const auto context = dir / fmt::format("context{}.json", index);
    fs::remove_all(out);  // a run killed before its answer was recorded starts afresh
    fs::create_directories(out);
    {
      std::ofstream file(context, std::ios::binary | std::ios::trunc);
      file << context_of(index) << '\n';
      if (!file.flush()) throw std::runtime_error(fmt::format("cannot write {}", context.string()));
    }
    const std::map<std::string, std::string, std::less<>> values = {
        {"context", context.string()}, {"out", out.string()}, {"index", std::to_string(index)},
        {"seed", std::to_string(seed(round, index))}, {"round", std::to_string(round)}};
    jobs::TaskSpec spec{.id = static_cast<std::uint64_t>(index), .argv = jobs::render_argv(m_s.propose.command, values),
                        .timeout = m_s.propose.timeout};
    spec.workdir = m_s.workdir;
    spec.env = {{"FLOTILLA_PROPOSER_INDEX", std::to_string(index)},
                {"FLOTILLA_PROPOSER_SEED", std::to_string(seed(round, index))},
                {"FLOTILLA_ROUND", std::to_string(round)}};
    specs.push_back(std::move(spec));
  }
  auto backend = jobs::make_host_backend({.slots = static_cast<unsigned>(m_s.propose.parallel), .pin = false,
                                          .path_prepend = m_path_prepend,
                                          .campaign_tag = m_s.campaign_results.string()});
  backend->submit(std::move(specs));
  std::map<int, jobs::TaskResult> ended;
  bool cancelled = false;
  while (backend->queued() + backend->running() > 0) {
    if (!cancelled && stopping()) {
      backend->cancel_all();
      cancelled = true;
    }
    for (auto& r : backend->collect(std::chrono::milliseconds(200))) ended[static_cast<int>(r.id)] = std::move(r);
  }
  std::vector<ProposerRun> runs;
  std::string changed;
  for (const auto& [tree, before] : watched) {
    if (digest_or_empty(tree) == before) continue;
    if (tree != m_s.propose.tree) {
      // A copy it was given to read: made again from the source tree when next needed.
      std::error_code ignored;
      fs::remove_all(tree, ignored);
      changed += (changed.empty() ? "" : ", ") + tree.string() + " (the copies are made again)";
    } else {
      changed += (changed.empty() ? "" : ", ") + tree.string() +
                 " ([propose] tree: restore it, or the campaign cannot be resumed)";
    }
  }
  for (int index : indices) {
    ProposerRun run{.index = index, .tree_changed = changed};
    const auto& r = ended.at(index);
    run.output_tail = r.output_tail;
    if (r.status == jobs::TaskStatus::cancelled) run.failure = "stopped";
    else if (r.status != jobs::TaskStatus::ok && r.status != jobs::TaskStatus::failed) run.failure = r.reason;
    else if (r.exit_code != 0 || r.status == jobs::TaskStatus::failed)
      run.failure = r.reason.empty() ? fmt::format("exit code {}", r.exit_code) : r.reason;
    std::vector<fs::path> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir / fmt::format("out{}", index), ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    std::sort(entries.begin(), entries.end());
    for (const auto& path : entries) {
      if (path.filename() == "done") {  // the proposer has nothing more to propose
        auto file = read_out_file(path, 4096);
        run.done = file.problem.empty() ? file.content : std::string();
        while (run.done && !run.done->empty() && (run.done->back() == '\n' || run.done->back() == ' ')) run.done->pop_back();
        continue;
      }
      if (run.files.size() == kMaxProposalFiles) {
        run.files.push_back({.name = "...", .problem = fmt::format("{} files more than the {} a run may write: not read",
                                                                   entries.size() - kMaxProposalFiles, kMaxProposalFiles)});
        break;
      }
      run.files.push_back(read_out_file(path, path.extension() == ".json" ? kMaxMetaBytes : kMaxPatchBytes));
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

Judgement ProposeStage::judge(int round, const std::vector<ProposerRun>& runs, const results::CampaignSummary& summary,
                              const std::vector<results::CandidateRecord>& candidates,
                              const std::vector<results::ProposalRecord>& recorded, int made) {
  Judgement j;
  std::map<std::uint64_t, std::string> earlier;  // hash -> who had it
  for (const auto& p : recorded)
    if (p.hash != 0) earlier.emplace(p.hash, fmt::format("proposal {} ({}, round {})", p.id, p.name, p.round));
  int accepted_now = 0;
  const double time = now_seconds();
  const auto refuse = [&](int proposer, std::string name, std::string reason, std::string patch = {},
                          std::int64_t parent = -1) {
    j.records.push_back({.round = round, .proposer = proposer, .parent = parent, .status = results::ProposalStatus::refused,
                         .name = std::move(name), .reason = std::move(reason), .patch = std::move(patch), .time = time});
    ++made;
  };
  for (const auto& run : runs) {
    const std::size_t first = j.records.size();
    if (!run.failure.empty()) {
      std::string tail = run.output_tail;
      if (tail.size() > 600) tail = "..." + tail.substr(tail.size() - 600);
      refuse(run.index, "", fmt::format("the proposer failed: {}{}{}", run.failure, tail.empty() ? "" : "; its output ends: ",
                                        tail));
    } else if (!run.tree_changed.empty()) {
      refuse(run.index, "", fmt::format("the proposer changed {}, which it was given only to read: what it wrote is "
                                        "refused (write into {{out}} alone)", run.tree_changed));
    } else {
      std::map<std::string, const ProposerRun::File*> patches, metas;
      for (const auto& file : run.files) {
        if (!file.problem.empty()) {
          refuse(run.index, file.name, fmt::format("'{}' {}", file.name, file.problem));
          continue;
        }
        const fs::path path(file.name);
        const auto stem = path.stem().string();
        if (path.extension() == ".patch" && valid_name(stem)) patches[stem] = &file;
        else if (path.extension() == ".json" && valid_name(stem)) metas[stem] = &file;
        else
          refuse(run.index, file.name,
                 fmt::format("'{}' is not NAME.patch or NAME.json (NAME: letters, digits, . _ -, at most 63)", file.name));
      }
      for (const auto& [name, meta] : metas)
        if (!patches.contains(name)) refuse(run.index, name, fmt::format("'{}.json' has no {}.patch beside it", name, name));
      if (patches.empty() && j.records.size() == first && !run.done)
        refuse(run.index, "", "the proposer wrote no proposal (NAME.patch) into {out}");
      for (const auto& [name, file] : patches) {
        const std::string& patch = file->content;
        if (made >= m_s.propose.budget) {
          refuse(run.index, name, fmt::format("the proposal budget ({}) is spent", m_s.propose.budget), patch);
          continue;
        }
        ProposalMeta meta;
        if (auto it = metas.find(name); it != metas.end()) meta = parse_proposal_meta(it->second->content);
        if (!meta.error.empty()) {
          refuse(run.index, name, fmt::format("{}.json: {}", name, meta.error), patch);
          continue;
        }
        const auto parent = resolve_parent(meta.parent, summary);
        if (!parent.id) {
          refuse(run.index, name, parent.refusal, patch);
          continue;
        }
        const auto check = check_patch(patch);
        if (!check.error.empty()) {
          refuse(run.index, name, check.error, patch, *parent.id);
          continue;
        }
        // The parent's parameters, with those NAME.json gives in their place.
        std::string config;
        try {
          // name=value words of the parent's canonical text, with the given values in place.
          std::vector<std::pair<std::string, std::string>> words;
          std::istringstream text(candidates.at(static_cast<std::size_t>(*parent.id)).config);
          for (std::string word; text >> word;) {
            const auto eq = word.find('=');
            words.emplace_back(word.substr(0, eq), eq == std::string::npos ? std::string() : word.substr(eq + 1));
          }
          for (const auto& [param, value] : meta.parameters) {
            const auto at = std::find_if(words.begin(), words.end(), [&](const auto& w) { return w.first == param; });
            if (at == words.end()) throw search::SpaceError(fmt::format("'{}' is not a parameter of [space]", param));
            at->second = value;
          }
          std::string joined;
          for (const auto& [param, value] : words) joined += (joined.empty() ? "" : " ") + param + "=" + value;
          const auto values = m_s.space.parse_configuration(joined);
          if (!m_s.space.feasible(values)) throw search::SpaceError("the parameters break a constraint of [space]");
          config = m_s.space.to_text(values);
        } catch (const search::SpaceError& e) {
          refuse(run.index, name, fmt::format("{}.json parameters: {}", name, e.what()), patch, *parent.id);
          continue;
        }
        const auto chain = chain_of(*parent.id, candidates, recorded);
        const auto hash = proposal_hash(chain_key(chain, recorded), config, patch);
        if (auto it = earlier.find(hash); it != earlier.end()) {
          refuse(run.index, name, fmt::format("it repeats {}: the same patch on the same parent and parameters", it->second),
                 patch, *parent.id);
          j.records.back().hash = hash;
          continue;
        }
        if (accepted_now >= m_s.propose.max_per_round) {
          refuse(run.index, name, fmt::format("propose.max_per_round ({}) proposals were accepted this round already",
                                              m_s.propose.max_per_round), patch, *parent.id);
          continue;
        }
        std::string applies;
        try {
          applies = m_trees.try_apply(m_trees.ensure(chain, recorded), patch, check.files);
        } catch (const std::exception& e) {
          applies = e.what();
        }
        if (!applies.empty()) {
          refuse(run.index, name, fmt::format("it does not apply to candidate {}'s tree: {}", *parent.id, applies), patch,
                 *parent.id);
          j.records.back().hash = hash;
          continue;
        }
        earlier.emplace(hash, fmt::format("{} (round {}, proposer {})", name, round, run.index));
        j.records.push_back({.round = round, .proposer = run.index, .parent = *parent.id, .hash = hash,
                             .status = results::ProposalStatus::accepted, .name = name, .patch = patch,
                             .rationale = meta.rationale, .time = time});
        j.accepted.push_back({j.records.size() - 1, config});
        ++made;
        ++accepted_now;
      }
    }
    const auto count = j.records.size() - first;
    const auto taken = std::count_if(j.records.begin() + static_cast<std::ptrdiff_t>(first), j.records.end(),
                                     [](const auto& r) { return r.status == results::ProposalStatus::accepted; });
    // An answer that says `done` retires the proposer: it is not run again (name "done").
    j.records.push_back({.round = round, .proposer = run.index, .status = results::ProposalStatus::answered,
                         .name = run.done ? "done" : "",
                         .reason = fmt::format("{} proposal{}: {} accepted, {} refused{}", count, count == 1 ? "" : "s",
                                               taken, count - static_cast<std::size_t>(taken),
                                               run.done ? "; done" + (run.done->empty() ? "" : ": " + *run.done)
                                                        : std::string()),
                         .time = time});
  }
  return j;
}

}  // namespace flotilla::scheduler
