// ChoiceValues.cpp — choices with values (ChoiceValues.h).
#include "ChoiceValues.h"

#include <algorithm>

#include <fmt/format.h>

#include "flotilla/jobs/Command.h"

namespace flotilla::scheduler {

void apply_choice_values(const search::Space& space, PlaceholderValues& values) {
  const PlaceholderValues before = values;  // every value rendered from the same, unreplaced map
  for (const auto& p : space.parameters()) {
    if (p.choice_values.empty()) continue;
    const auto it = values.find(p.name);
    if (it == values.end()) continue;
    const auto label = std::find(p.labels.begin(), p.labels.end(), it->second);
    if (label == p.labels.end()) continue;  // not one of its choices: left as it is
    it->second = jobs::render_text(p.choice_values[static_cast<std::size_t>(label - p.labels.begin())], before);
  }
}

std::optional<std::string> choice_value_problem(const search::Parameter& p, const search::Space& space,
                                                const std::vector<std::string>& known, const std::string& command) {
  const auto has_values = [&](const std::string& name) {
    for (const auto& q : space.parameters())
      if (q.name == name) return !q.choice_values.empty();
    return false;
  };
  for (std::size_t i = 0; i < p.choice_values.size(); ++i) {
    std::vector<std::string> names;
    try {
      names = jobs::text_placeholders(p.choice_values[i]);
    } catch (const jobs::CommandError& e) {
      return fmt::format("choice '{}': {}", p.labels[i], e.what());
    }
    for (const auto& name : names) {
      if (has_values(name))
        return fmt::format("choice '{}' names {{{}}}, a parameter whose choices have values: a value is expanded once",
                           p.labels[i], name);
      if (!std::binary_search(known.begin(), known.end(), name))
        return fmt::format("choice '{}' names {{{}}}, which {} has not (known: {})", p.labels[i], name, command,
                           fmt::join(known, ", "));
    }
  }
  return std::nullopt;
}

}  // namespace flotilla::scheduler
