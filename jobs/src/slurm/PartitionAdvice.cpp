// PartitionAdvice.cpp — why Slurm will not run a job, in settings (PartitionAdvice.h).
#include "PartitionAdvice.h"

#include <charconv>

#include <fmt/format.h>

namespace flotilla::jobs::slurm {
namespace {

std::string_view word_value(std::string_view line, std::string_view key) {
  std::size_t at = 0;
  while (at < line.size()) {
    const auto end = std::min(line.find(' ', at), line.size());
    const auto word = line.substr(at, end - at);
    if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=')
      return word.substr(key.size() + 1);
    at = end + 1;
  }
  return {};
}

std::optional<std::uint32_t> number(std::string_view text) {
  std::uint32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// Minutes as Slurm prints a time limit: [D-]HH:MM:00.
std::string slurm_time(std::chrono::minutes m) {
  const auto days = m.count() / (24 * 60), hours = m.count() / 60 % 24, minutes = m.count() % 60;
  return days > 0 ? fmt::format("{}-{:02}:{:02}:00", days, hours, minutes) : fmt::format("{:02}:{:02}:00", hours, minutes);
}

// "resources.nodes (resources.evaluate.nodes for evaluate jobs)": a stage's section may hold it.
std::string setting(std::string_view key, std::string_view stage) {
  if (stage.empty()) return fmt::format("resources.{}", key);
  return fmt::format("resources.{} (resources.{}.{} for {} jobs)", key, stage, key, stage);
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

std::vector<PartitionLimits> parse_partitions(std::string_view text) {
  std::vector<PartitionLimits> out;
  while (!text.empty()) {
    const auto eol = std::min(text.find('\n'), text.size());
    const auto line = text.substr(0, eol);
    text = text.substr(std::min(eol + 1, text.size()));
    const auto name = word_value(line, "PartitionName");
    if (name.empty()) continue;
    PartitionLimits p{.name = std::string(name),
                      .is_default = word_value(line, "Default") == "YES",
                      .state = std::string(word_value(line, "State")),
                      .max_nodes = number(word_value(line, "MaxNodes")),  // UNLIMITED: none
                      .total_nodes = number(word_value(line, "TotalNodes")).value_or(0),
                      .max_time = parse_slurm_time(word_value(line, "MaxTime"))};  // UNLIMITED: none
    out.push_back(std::move(p));
  }
  return out;
}

const PartitionLimits* find_partition(const std::vector<PartitionLimits>& partitions, const JobRequest& request) {
  for (const auto& p : partitions)
    if (request.partition.empty() ? p.is_default : p.name == request.partition) return &p;
  return nullptr;
}

std::optional<std::string> broken_limit(const PartitionLimits& p, const JobRequest& request, std::string_view stage) {
  const auto nodes = static_cast<std::uint32_t>(request.nodes);
  const auto other = " or choose another partition with " + setting("partition", stage);
  if (nodes > p.total_nodes && p.total_nodes > 0)
    return fmt::format("partition {} has {} node{}; the job asks for {}: lower {},{}", p.name, p.total_nodes,
                       p.total_nodes == 1 ? "" : "s", nodes, setting("nodes", stage), other);
  if (p.max_nodes && nodes > *p.max_nodes)
    return fmt::format("partition {} allows at most {} node{} a job (MaxNodes); the job asks for {}: lower {},{}", p.name,
                       *p.max_nodes, *p.max_nodes == 1 ? "" : "s", nodes, setting("nodes", stage), other);
  if (p.max_time && request.time_limit > *p.max_time)
    return fmt::format("partition {} allows at most {} a job (MaxTime); the job asks for {}: lower {},{}", p.name,
                       slurm_time(*p.max_time), slurm_time(request.time_limit), setting("time_limit", stage), other);
  return std::nullopt;
}

bool is_partition_limit_reason(std::string_view reason) {
  return reason == "PartitionNodeLimit" || reason == "PartitionTimeLimit" || reason == "PartitionConfig";
}

std::string refusal_advice(std::string_view message, const std::vector<PartitionLimits>& partitions,
                           const JobRequest& request, std::string_view stage) {
  const auto* partition = find_partition(partitions, request);
  if (contains(message, "Invalid partition name")) {
    std::string names;
    for (const auto& p : partitions) names += (names.empty() ? "" : ", ") + p.name;
    return fmt::format("partition {} does not exist on this cluster{}: set {}",
                       request.partition.empty() ? "(the default)" : request.partition,
                       names.empty() ? "" : " (it has " + names + ")", setting("partition", stage));
  }
  // Refused for its state, whatever else the job asks: the state is what to hear first.
  if (contains(message, "Required partition not available"))
    return fmt::format("partition {} is {}: wait for it to be UP (flotilla tries again), or choose another with {}",
                       partition ? partition->name : request.partition, partition ? partition->state : "not available",
                       setting("partition", stage));
  if (partition)
    if (auto broken = broken_limit(*partition, request, stage)) return *broken;
  if (contains(message, "Requested node configuration is not available"))
    return fmt::format("no {} node of partition {} has what the job asks a node for ({} ranks, {} GPUs{}): check {}, "
                       "{} and {} against `sinfo -N -o '%N %c %m %G %f'`",
                       request.nodes == 1 ? "" : "set of", partition ? partition->name : request.partition,
                       request.ranks_per_node, request.gpus_per_node,
                       request.extra.empty() ? "" : ", and the resources.sbatch options", setting("ranks_per_node", stage),
                       setting("gpus_per_node", stage), setting("sbatch", stage));
  if (contains(message, "Invalid feature specification"))
    return "the --constraint of resources.sbatch names a feature no node of the partition has (sinfo -o '%P %f')";
  if (contains(message, "Invalid account")) return "set resources.account to an account of yours (sacctmgr show assoc)";
  if (contains(message, "Invalid qos")) return "set " + setting("qos", stage) + " to a QOS you may use";
  return {};
}

}  // namespace flotilla::jobs::slurm
