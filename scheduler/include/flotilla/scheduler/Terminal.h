// Terminal.h — what the scheduler and the command line ask of the terminal they write to.
#pragma once

namespace flotilla::scheduler {

// The columns of the terminal standard output is; 0 when it is none (a pipe, a file): reports
// are wrapped to it (results::wrap_report) only on a terminal.
int stdout_columns();

}  // namespace flotilla::scheduler
