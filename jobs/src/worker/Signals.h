// Signals.h — how a worker rank ends when its job is cancelled, so that no task outlives it.
//
// mpirun and Slurm end a job with SIGTERM (SIGKILL a few seconds later), and a rank whose mpirun
// is SIGKILLed (by a cancelling backend, or with the scheduler) gets SIGTERM from the kernel
// through PR_SET_PDEATHSIG. Both only set a flag here; the rank looks at it between tasks, while
// it waits for messages, and at least every 200 ms while a command runs, then kills the running
// command's process group and exits at once (exit status 143). Without this, a command's
// grandchildren would be left running: Open MPI puts every rank in a process group of its own.
// An in-process kernel cannot be interrupted: the rank stops when it returns.
#pragma once

namespace flotilla::jobs::worker {

void install_termination_handlers();
bool termination_requested();
[[noreturn]] void exit_terminated();

}  // namespace flotilla::jobs::worker
