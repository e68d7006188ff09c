// Wire.h — the worker's messages between ranks, as bytes (pure: no MPI here).
//
// Protocol (tags in Mpi.h): a worker says HELLO (its host and device) once; the dispatcher
// answers with BATCH messages, each a range [begin, end) of positions in the job's task list
// (which every rank already holds), or STOP; the worker answers each batch with one RESULTS
// message: the seconds it spent running the batch, then one record per task. Task bodies never
// travel: a batch costs 16 bytes whatever its tasks are.
// Decoding checks every length against the bytes left and throws WireError on a short message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/JobFile.h"

namespace flotilla::jobs::wire {

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Hello {
  std::string host;
  std::string device;
  std::string cores;  // the rank's CPUs (cpu_list_text)
  std::string slurm_job;  // the Slurm job the rank runs in; empty: none
};

struct Batch {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct Results {
  double busy_seconds = 0;                  // running the batch's tasks, overheads included
  std::vector<results::JobRecord> records;  // host and device are not sent (HELLO said them)
};

std::string encode(const Hello& hello);
std::string encode(const Batch& batch);
std::string encode(const Results& results);

Hello decode_hello(std::string_view bytes);
Batch decode_batch(std::string_view bytes);
Results decode_results(std::string_view bytes);

}  // namespace flotilla::jobs::wire
