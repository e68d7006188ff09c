// Manifest.cpp — manifest JSON <-> struct (Manifest.h), with errors naming the file and field.
#include "flotilla/jobs/Manifest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace flotilla::jobs {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

std::string type_name(const Json& value) { return value.type_name(); }

// The fields of one JSON object, read by name; anything left unread is an unknown field.
class Fields {
 public:
  Fields(const Json& object, std::string where, std::string_view source)
      : m_object(object), m_where(std::move(where)), m_source(source) {
    if (!object.is_object()) fail("", "expected an object, got " + type_name(object));
  }

  [[noreturn]] void fail(std::string_view field, const std::string& message) const {
    std::string at = m_where;
    if (!field.empty()) at += (at.empty() ? "" : ".") + std::string(field);
    throw ManifestError(std::string(m_source) + ": " + (at.empty() ? "" : at + ": ") + message);
  }

  const Json* find(const char* name) {
    m_used.push_back(name);
    const auto it = m_object.find(name);
    return it == m_object.end() ? nullptr : &*it;
  }
  const Json& need(const char* name) {
    const Json* value = find(name);
    if (!value) fail("", std::string("missing field '") + name + "'");
    return *value;
  }

  std::string text(const char* name, std::string fallback, bool required = false) {
    const Json* value = required ? &need(name) : find(name);
    if (!value) return fallback;
    if (!value->is_string()) fail(name, "expected a string, got " + type_name(*value));
    return value->get<std::string>();
  }
  long long integer(const char* name, long long fallback, long long min, long long max, bool required = false) {
    const Json* value = required ? &need(name) : find(name);
    if (!value) return fallback;
    if (!value->is_number_integer()) fail(name, "expected an integer, got " + type_name(*value));
    const long long number = value->get<long long>();
    if (number < min || number > max)
      fail(name,
           std::to_string(number) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return number;
  }
  std::uint64_t id(const char* name) {
    const Json& value = need(name);
    if (!value.is_number_unsigned()) fail(name, "expected a non-negative integer, got " + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return value.get<std::uint64_t>();
  }
  std::vector<std::string> strings(const char* name, bool required) {
    const Json* value = required ? &need(name) : find(name);
    std::vector<std::string> list;
    if (!value) return list;
    if (!value->is_array()) fail(name, "expected an array of strings, got " + type_name(*value));
    for (std::size_t i = 0; i < value->size(); ++i) {
      if (!(*value)[i].is_string())
        fail(std::string(name) + "[" + std::to_string(i) + "]", "expected a string, got " + type_name((*value)[i]));
      list.push_back((*value)[i].get<std::string>());
    }
    if (required && list.empty()) fail(name, "must not be empty");
    return list;
  }
  std::map<std::string, std::string> string_map(const char* name) {
    std::map<std::string, std::string> map;
    const Json* value = find(name);
    if (!value) return map;
    if (!value->is_object()) fail(name, "expected an object of strings, got " + type_name(*value));
    for (const auto& [key, entry] : value->items()) {
      if (!entry.is_string()) fail(std::string(name) + "." + key, "expected a string, got " + type_name(entry));
      map[key] = entry.get<std::string>();
    }
    return map;
  }
  void finish() const {
    for (const auto& [key, value] : m_object.items())
      if (std::find(m_used.begin(), m_used.end(), key) == m_used.end()) fail("", "unknown field '" + key + "'");
  }

 private:
  const Json& m_object;
  std::string m_where;
  std::string_view m_source;
  std::vector<std::string_view> m_used;  // a few names per object: a vector beats a set
};

constexpr long long kMaxTimeoutMs = std::numeric_limits<std::int32_t>::max() * 1000LL;

CommandTask read_command(Fields& fields) {
  CommandTask task;
  task.argv = fields.strings("argv", true);
  task.timeout = std::chrono::milliseconds(fields.integer("timeout_ms", 0, 0, kMaxTimeoutMs));
  for (const auto& [key, value] : fields.string_map("env")) task.env.emplace_back(key, value);
  task.workdir = fields.text("workdir", "");
  task.objective = fields.text("objective", "");
  task.fresh_dir = fields.text("fresh_dir", "");
  return task;
}

KernelTask read_kernel(Fields& fields) {
  KernelTask task;
  task.family = fields.text("family", "", true);
  task.params = fields.string_map("params");
  const std::string mode = fields.text("mode", "benchmark");
  if (mode != "benchmark" && mode != "verify")
    fields.fail("mode", "expected \"benchmark\" or \"verify\", got \"" + mode + "\"");
  task.mode = mode == "verify" ? KernelMode::verify : KernelMode::benchmark;
  task.shards = static_cast<int>(fields.integer("shards", 1, 1, std::numeric_limits<int>::max()));
  task.shard = static_cast<int>(fields.integer("shard", 0, 0, task.shards - 1));
  task.timeout = std::chrono::milliseconds(fields.integer("timeout_ms", 0, 0, kMaxTimeoutMs));
  task.objective = fields.text("objective", "");
  task.argv = fields.strings("argv", false);
  return task;
}

ManifestTask read_task(const Json& value, std::size_t index, std::string_view source) {
  Fields fields(value, "tasks[" + std::to_string(index) + "]", source);
  ManifestTask task;
  task.id = fields.id("id");
  task.attempt = static_cast<int>(fields.integer("attempt", 0, 0, std::numeric_limits<int>::max()));
  const std::string kind = fields.text("kind", "", true);
  if (kind == "command")
    task.work = read_command(fields);
  else if (kind == "kernel")
    task.work = read_kernel(fields);
  else
    fields.fail("kind", "expected \"command\" or \"kernel\", got \"" + kind + "\"");
  fields.finish();
  return task;
}

// A task's line of the manifest, written directly: building an nlohmann object for each task
// and dumping it was a tenth of flotilla's CPU in an mpi campaign of 4x10^4 tasks (bench/scale).
// The text is the same as that dump's (ManifestTest keeps its lines): compact, keys in this order,
// strings escaped by nlohmann's serializer whenever they hold anything but printable ASCII
// without quotes or backslashes (control characters, UTF-8, bytes that are not UTF-8).
class TaskLine {
 public:
  template <class Value>
  void field(std::string_view name, const Value& value) {
    m_text += m_first ? "{" : ",";
    m_first = false;
    write(name);
    m_text += ':';
    write(value);
  }
  std::string finish() { return std::move(m_text) + "}"; }

 private:
  void write(std::string_view value) {
    const bool plain = std::all_of(value.begin(), value.end(),
                                   [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; });
    if (!plain) {
      m_text += Json(std::string(value)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
    m_text += '"';
    m_text += value;
    m_text += '"';
  }
  void write(const char* value) { write(std::string_view(value)); }
  void write(const std::string& value) { write(std::string_view(value)); }
  void write(long long value) { m_text += std::to_string(value); }
  void write(std::uint64_t value) { m_text += std::to_string(value); }
  void write(const std::vector<std::string>& values) {
    m_text += '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i) m_text += ',';
      write(values[i]);
    }
    m_text += ']';
  }
  template <class Pairs>  // a map, or a vector of pairs: an object of strings in their order
  void write_object(const Pairs& pairs) {
    m_text += '{';
    bool first = true;
    for (const auto& [name, value] : pairs) {
      if (!first) m_text += ',';
      first = false;
      write(name);
      m_text += ':';
      write(value);
    }
    m_text += '}';
  }
  void write(const std::map<std::string, std::string>& pairs) { write_object(pairs); }
  void write(const std::vector<std::pair<std::string_view, std::string_view>>& pairs) { write_object(pairs); }

  std::string m_text;
  bool m_first = true;
};

void write_command(TaskLine& line, const CommandTask& task) {
  line.field("kind", "command");
  line.field("argv", task.argv);
  line.field("timeout_ms", static_cast<long long>(task.timeout.count()));
  if (!task.env.empty()) {
    // A later value replaces an earlier one of the same name, in its place, as in TaskSpec.
    std::vector<std::pair<std::string_view, std::string_view>> env;
    for (const auto& [name, value] : task.env) {
      const auto same = std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
      if (same != env.end())
        same->second = value;
      else
        env.emplace_back(name, value);
    }
    line.field("env", env);
  }
  if (!task.workdir.empty()) line.field("workdir", task.workdir.string());
  line.field("objective", task.objective);
  if (!task.fresh_dir.empty()) line.field("fresh_dir", task.fresh_dir.string());
}

void write_kernel(TaskLine& line, const KernelTask& task) {
  line.field("kind", "kernel");
  line.field("family", task.family);
  line.field("params", task.params);
  line.field("mode", task.mode == KernelMode::verify ? "verify" : "benchmark");
  if (task.mode == KernelMode::verify) {
    line.field("shard", static_cast<long long>(task.shard));
    line.field("shards", static_cast<long long>(task.shards));
  }
  line.field("timeout_ms", static_cast<long long>(task.timeout.count()));
  line.field("objective", task.objective);
  if (!task.argv.empty()) line.field("argv", task.argv);
}

}  // namespace

std::string manifest_to_json(const Manifest& manifest) {
  // One task per line: a person can read and grep it, and it stays compact (no indentation).
  const OrderedJson head{
      {"flotilla_manifest", kManifestVersion}, {"job", manifest.job}, {"output", manifest.output.string()}};
  std::string text = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.pop_back();  // the closing brace: "tasks" follows
  text += ", \"tasks\": [";
  for (std::size_t i = 0; i < manifest.tasks.size(); ++i) {
    const ManifestTask& task = manifest.tasks[i];
    TaskLine line;
    line.field("id", task.id);
    line.field("attempt", static_cast<long long>(task.attempt));
    if (const auto* command = std::get_if<CommandTask>(&task.work))
      write_command(line, *command);
    else
      write_kernel(line, std::get<KernelTask>(task.work));
    text += i ? ",\n " : "\n ";
    text += line.finish();
  }
  return text + "\n]}\n";
}

Manifest manifest_from_json(std::string_view text, std::string_view source) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {  // parse_error, and out_of_range for a number beyond a double
    throw ManifestError(std::string(source) + ": not JSON: " + error.what());
  }
  Fields fields(root, "", source);
  const long long version = fields.integer("flotilla_manifest", 0, 0, 1'000'000, true);
  if (version != kManifestVersion)
    fields.fail("flotilla_manifest", "version " + std::to_string(version) + " is not supported (supports " +
                                         std::to_string(kManifestVersion) + ")");
  Manifest manifest;
  manifest.job = fields.text("job", "", true);
  manifest.output = fields.text("output", "", true);
  if (manifest.output.empty()) fields.fail("output", "must not be empty");
  const Json& tasks = fields.need("tasks");
  if (!tasks.is_array()) fields.fail("tasks", "expected an array, got " + type_name(tasks));
  manifest.tasks.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) manifest.tasks.push_back(read_task(tasks[i], i, source));
  fields.finish();
  return manifest;
}

void write_manifest(const std::filesystem::path& path, const Manifest& manifest) {
  const std::string text = manifest_to_json(manifest);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out.flush()) throw ManifestError(path.string() + ": cannot write: " + std::strerror(errno));
}

Manifest read_manifest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError(path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  Manifest manifest = manifest_from_json(text.str(), path.string());
  if (manifest.output.is_relative()) manifest.output = path.parent_path() / manifest.output;
  return manifest;
}

}  // namespace flotilla::jobs
