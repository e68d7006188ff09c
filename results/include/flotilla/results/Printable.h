// Printable.h — untrusted text made safe to show to people. Task output, metric names, failure
// reasons, host and campaign names read from a results file are bytes anyone may have written; on
// a terminal an ESC or a C1 control in them could set the window title, clear the screen or
// rewrite what flotilla printed before.
//
// Rules of `printable`:
//  - valid UTF-8 stays as it is ("µs", "é"), and so do the structural '\n' and '\t';
//  - C0 controls, DEL and each byte that is not part of valid UTF-8 become \xHH (lowercase hex);
//  - C1 controls (U+0080..U+009F, which some terminals obey like ESC) become \u0080..\u009f;
//  - a backslash stays as it is: doubling it would garble paths and patterns that are already
//    printable, and would make the function stop being idempotent.
// The result is valid UTF-8 with no control character but '\n' and '\t', and
// printable(printable(x)) == printable(x), so text escaped twice on its way out reads the same.
// For text shown to people only: JSON is escaped by its writer, and CSV is data.
#pragma once

#include <string>
#include <string_view>

namespace flotilla::results {

std::string printable(std::string_view text);

}  // namespace flotilla::results
