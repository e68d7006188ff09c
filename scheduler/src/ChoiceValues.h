// ChoiceValues.h — choices with values (docs/config.md#choices-with-values), internal to the
// scheduler: `[space] param = db: enum: memory=:memory:, file={tmpdir}/test.db`. A choice's
// label ("file") is what the space, the search, the build key and every report see; its value
// is what commands get in place of {db}. Pure functions over a task's placeholder values.
// Invariants: a value is expanded once, from the campaign file's text, with the task's own
// values (never read again, so nothing a task or a value holds is ever taken for a placeholder);
// a value names only placeholders of every command its parameter appears in, checked when the
// file is read (choice_value_problem).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/search/Space.h"

namespace flotilla::scheduler {

using PlaceholderValues = std::map<std::string, std::string, std::less<>>;

// Replaces the label of each parameter whose choices have values with its choice's value,
// rendered with `values` as they were before any replacement (jobs::render_text). A placeholder
// `values` lacks stays as written: flotilla-per-file fills {file} and {tmpdir} per file.
void apply_choice_values(const search::Space& space, PlaceholderValues& values);

// Why parameter `p`'s choice values cannot go into a command whose placeholders are `known`
// (sorted): "choice 'file' names {tmpdr}, which [evaluate] command has not (known: ...)", or
// nullopt when they can. `command` names the command in the message ("[evaluate] command").
std::optional<std::string> choice_value_problem(const search::Parameter& p, const search::Space& space,
                                                const std::vector<std::string>& known, const std::string& command);

}  // namespace flotilla::scheduler
