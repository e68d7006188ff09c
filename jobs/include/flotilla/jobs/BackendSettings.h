// BackendSettings.h — each backend's own settings: read from the campaign's [resources] keys by
// the backend's row of the registry (Backend.cpp), kept as an object the scheduler passes through
// without looking inside (BackendOptions::config), and handed back to the backend when it is made.
//
// The keys come through a SettingsSource, which the scheduler implements over the campaign file
// and the command line: every read checks the value and every failure is the scheduler's located
// error ("campaign.ini:14: [resources] nodes: 'x' is not a positive integer"), so a backend's
// settings are checked as strictly as the scheduler's own, with the same messages. Every row
// reads its keys for every campaign, whichever backend it runs on: a bad key is an error
// wherever it is, as any other key of the file.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::jobs {

// The campaign's settings as a backend reads them. Keys are "section.key" as declared
// (BackendSetting, Backend.h); a key without a value and without a default reads as "".
class SettingsSource {
 public:
  virtual ~SettingsSource() = default;
  // Set in the file or on the command line (not a default).
  virtual bool given(std::string_view key) = 0;
  virtual std::string text(std::string_view key) = 0;
  virtual long long integer(std::string_view key, long long min, long long max) = 0;
  virtual std::chrono::milliseconds duration(std::string_view key) = 0;
  // One of `names`; anything else is an error listing them.
  virtual std::string choice(std::string_view key, const std::vector<std::string_view>& names) = 0;
  // Every value of a repeatable key, in order.
  virtual std::vector<std::string> all(std::string_view key) = 0;
  // Throws the located error "WHERE: [SECTION] KEY: 'VALUE' WHAT" for the key's value (of a
  // repeatable key, its value number `item`).
  [[noreturn]] virtual void fail(std::string_view key, std::string_view what, std::size_t item = 0) = 0;
  // Throws "WHERE: [SECTION] KEY: WHAT", the section being the key up to its last dot: for a
  // message that quotes the part of the value it is about.
  [[noreturn]] virtual void fail_bare(std::string_view key, std::string_view what) = 0;
};

// One backend's settings, of a type only that backend knows (SlurmSettings.h).
class BackendConfig {
 public:
  virtual ~BackendConfig() = default;
  // Tasks it runs at once as configured (evaluate.shards = auto); 0: as the scheduler decides.
  virtual unsigned tasks_at_once() const { return 0; }
};

// Every registered backend's settings, by backend name (read_backend_configs, Backend.h).
class BackendConfigs {
 public:
  void add(std::string_view backend, std::shared_ptr<const BackendConfig> config) {
    m_configs.emplace_back(std::string(backend), std::move(config));
  }
  // The settings of `backend`; null for a backend without settings of its own, or unknown.
  std::shared_ptr<const BackendConfig> find(std::string_view backend) const {
    for (const auto& [name, config] : m_configs)
      if (name == backend) return config;
    return nullptr;
  }

 private:
  std::vector<std::pair<std::string, std::shared_ptr<const BackendConfig>>> m_configs;
};

}  // namespace flotilla::jobs
