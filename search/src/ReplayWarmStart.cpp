// ReplayWarmStart.cpp — reads another recorded space of the same kernel as a warm start for a
// replay (Replay.h: warm_start_from).
//
// Parameters are matched by name (exactly, else ignoring case, else by the caller's map), values
// by their text, so an int 8 on one GPU is an int 8 on the other and enum choices match by name
// whatever their order. Invariants: every parameter of this space is read from exactly one of
// the other file's, or pinned to one value; every parameter of the other file is read or pinned;
// a configuration whose value is not on this space's grid, or that is not a row here, is counted
// and left out, never guessed; objectives are turned into this replay's loss convention (lower
// is better).
#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "flotilla/search/Replay.h"

namespace flotilla::search {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string names(const Space& space) {
  std::vector<std::string> out;
  for (const auto& p : space.parameters()) out.push_back(p.name);
  return fmt::format("{}", fmt::join(out, ", "));
}

std::optional<std::size_t> index_of(const Space& space, std::string_view name) {
  const auto& params = space.parameters();
  for (std::size_t j = 0; j < params.size(); ++j)
    if (params[j].name == name) return j;
  return std::nullopt;
}

// The other file's parameter that this space's `name` reads from; nullopt when none matches.
std::optional<std::size_t> column_for(const RecordedSpace& recorded, const RecordedSpace& other, const std::string& name,
                       const WarmStartMatch& match) {
  const std::string where = fmt::format("warm start {}", other.source());
  for (const auto& [mine, theirs] : match.map) {
    if (mine != name) continue;
    if (auto j = index_of(other.space(), theirs)) return *j;
    throw ReplayError(fmt::format("{}: --warm-start-map {}={}: no parameter '{}' (its parameters: {})", where, mine, theirs,
                                  theirs, names(other.space())));
  }
  if (auto j = index_of(other.space(), name)) return *j;
  std::optional<std::size_t> found;
  const auto& params = other.space().parameters();
  for (std::size_t j = 0; j < params.size(); ++j)
    if (lower(params[j].name) == lower(name)) {
      if (found)
        throw ReplayError(fmt::format("{}: '{}' and '{}' both match '{}' of {} but for case (--warm-start-map {}=NAME picks one)",
                                      where, params[*found].name, params[j].name, name, recorded.source(), name));
      found = j;
    }
  return found;
}

}  // namespace

WarmStartData warm_start_from(const RecordedSpace& recorded, const RecordedSpace& other, const WarmStartMatch& match) {
  const std::string where = fmt::format("warm start {}", other.source());
  const auto& mine = recorded.space().parameters();
  const auto& theirs = other.space().parameters();
  for (const auto& [name, column] : match.map)
    if (!index_of(recorded.space(), name))
      throw ReplayError(fmt::format("{}: --warm-start-map {}={}: {} has no parameter '{}' (its parameters: {})", where, name, column,
                                    recorded.source(), name, names(recorded.space())));
  std::vector<std::optional<std::size_t>> column(mine.size());  // nullopt: the value pinned in `constant`
  std::vector<double> constant(mine.size(), 0.0);
  std::vector<bool> read(theirs.size(), false);
  for (std::size_t d = 0; d < mine.size(); ++d) {
    if ((column[d] = column_for(recorded, other, mine[d].name, match))) {
      read[*column[d]] = true;
      continue;
    }
    // A parameter the other file lacks (a switch only this kernel has) may be pinned: the other
    // file's rows are read as having that value.
    auto pin = std::find_if(match.fix.begin(), match.fix.end(), [&](const auto& f) { return f.first == mine[d].name; });
    if (pin == match.fix.end())
      throw ReplayError(fmt::format("{}: no parameter for '{}' of {} (its parameters: {}; --warm-start-map {}=NAME names it, "
                                    "--warm-start-fix {}=VALUE gives it one value)",
                                    where, mine[d].name, recorded.source(), names(other.space()), mine[d].name, mine[d].name));
    auto value = mine[d].parse(pin->second);
    if (!value)
      throw ReplayError(fmt::format("{}: --warm-start-fix {}={}: '{}' is not one of the values of '{}' in {}", where, pin->first,
                                    pin->second, pin->second, pin->first, recorded.source()));
    constant[d] = *value;
  }
  // Pinned parameters of the other file: (index, value).
  std::vector<std::pair<std::size_t, double>> pinned;
  for (const auto& [name, text] : match.fix) {
    if (index_of(recorded.space(), name) && !index_of(other.space(), name)) continue;  // pinned here, above
    auto j = index_of(other.space(), name);
    if (!j) throw ReplayError(fmt::format("{}: --warm-start-fix {}={}: no parameter '{}' (its parameters: {})", where, name, text, name,
                                          names(other.space())));
    if (read[*j]) throw ReplayError(fmt::format("{}: --warm-start-fix {}={}: '{}' is read as a parameter of {}", where, name, text, name,
                                                recorded.source()));
    auto value = theirs[*j].parse(text);
    if (!value) throw ReplayError(fmt::format("{}: --warm-start-fix {}={}: '{}' is not one of its values", where, name, text, text));
    pinned.emplace_back(*j, *value);
    read[*j] = true;
  }
  for (std::size_t j = 0; j < theirs.size(); ++j)
    if (!read[j])
      throw ReplayError(fmt::format("{}: its parameter '{}' is not in {} (--warm-start-fix {}=VALUE reads the rows with that value)",
                                    where, theirs[j].name, recorded.source(), theirs[j].name));

  WarmStartData data{.source = other.source()};
  for (const auto& row : other.configurations()) {
    ++data.rows;
    if (std::any_of(pinned.begin(), pinned.end(), [&](const auto& pin) { return row[pin.first] != pin.second; })) {
      ++data.left_out;
      continue;
    }
    Configuration config(mine.size());
    bool on_grid = true;
    for (std::size_t d = 0; d < mine.size() && on_grid; ++d) {
      if (!column[d]) {
        config[d] = constant[d];
        continue;
      }
      auto value = mine[d].parse(theirs[*column[d]].format(row[*column[d]]));
      on_grid = value.has_value();
      if (value) config[d] = *value;
    }
    if (!on_grid || !recorded.space().feasible(config)) {
      ++data.ignored;
      continue;
    }
    Observation o{.config = std::move(config)};
    if (auto value = other.objective(row)) o.loss = {recorded.maximize() ? -*value : *value};
    else o.failure = other.failure(row);
    data.observations.push_back(std::move(o));
  }
  return data;
}

}  // namespace flotilla::search
