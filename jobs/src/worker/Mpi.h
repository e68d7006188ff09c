// Mpi.h — the one thin checked wrapper over the MPI C API that the worker uses.
//
// Invariants:
//  - Every MPI call goes through FLOTILLA_MPI(call): MPI_COMM_WORLD returns errors instead of
//    aborting, and a failure becomes an MpiError naming the call, MPI's message and file:line.
//  - Only the main thread calls MPI (MPI_THREAD_FUNNELED).
//  - Waiting for a message never busy-polls for long: after a short spin it sleeps in growing
//    steps (up to 1 ms), so an idle dispatcher or worker leaves its core to the ranks and task
//    processes that have work. Prefetching (Scheduling.h) hides that latency from busy workers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flotilla::jobs::mpi {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_error(int code, const char* call, const char* file, int line);

inline void check(int code, const char* call, const char* file, int line) {
  if (code != 0) throw_error(code, call, file, line);  // 0 is MPI_SUCCESS
}

#define FLOTILLA_MPI(call) ::flotilla::jobs::mpi::check((call), #call, __FILE__, __LINE__)

enum Tag : int { kHello = 1, kBatch = 2, kStop = 3, kResults = 4 };

// MPI_Init_thread / MPI_Finalize for the process's lifetime.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  // Ends every rank of the job (a broken invariant: nothing sensible is left to do).
  [[noreturn]] void abort(int code) const;

 private:
  int m_rank = 0;
  int m_size = 1;
};

struct Message {
  int source = -1;
  int tag = 0;
  std::string payload;
};

void send(int destination, Tag tag, std::string_view payload);

// One send in flight: the caller goes on (running the next batch) while the receiver takes the
// message, instead of waiting in a large message's rendezvous for a receiver that is busy.
class AsyncSend {
 public:
  AsyncSend();
  ~AsyncSend();  // waits for the send in flight
  AsyncSend(const AsyncSend&) = delete;
  AsyncSend& operator=(const AsyncSend&) = delete;
  // Waits for the previous send, then starts this one; the payload is kept until it is done.
  void start(int destination, Tag tag, std::string payload);
  void wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};
// The next message from `source` (-1: any rank), if one has arrived.
std::optional<Message> try_receive(int source);
// Waits for the next message.
Message receive(int source);
// Rank `root`'s bytes on every rank.
void broadcast(std::string& bytes, int root);
void broadcast(std::uint64_t& value, int root);

}  // namespace flotilla::jobs::mpi
