// Mpi.cpp — checked MPI calls, messages with idle back-off, and broadcasts of any size.
#include "Mpi.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "Signals.h"

namespace flotilla::jobs::mpi {
namespace {

// Spins this long before sleeping: a reply that is on its way (about 1 us on a node) is picked
// up without the cost of a sleep.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);

}  // namespace

void throw_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::strcpy(text, "unknown MPI error");
  const std::string name(call, std::strcspn(call, "("));
  const char* base = std::strrchr(file, '/');
  throw MpiError(name + " failed: " + text + " (" + (base ? base + 1 : file) + ":" + std::to_string(line) + ")");
}

Session::Session(int& argc, char**& argv) {
  int provided = 0;
  FLOTILLA_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  FLOTILLA_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  FLOTILLA_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &m_rank));
  FLOTILLA_MPI(MPI_Comm_size(MPI_COMM_WORLD, &m_size));
}

Session::~Session() { MPI_Finalize(); }  // nothing to report to in a destructor

void Session::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; keep [[noreturn]] honest if it ever does
}

void send(int destination, Tag tag, std::string_view payload) {
  if (payload.size() > static_cast<std::size_t>(INT_MAX))
    throw MpiError("message of " + std::to_string(payload.size()) + " bytes is too large");
  FLOTILLA_MPI(MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, destination, tag, MPI_COMM_WORLD));
}

std::optional<Message> try_receive(int source) {
  int found = 0;
  MPI_Message handle;
  MPI_Status status;
  FLOTILLA_MPI(
      MPI_Improbe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &handle, &status));
  if (!found) return std::nullopt;
  int count = 0;
  FLOTILLA_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
  Message message{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
  FLOTILLA_MPI(MPI_Mrecv(message.payload.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE));
  return message;
}

Message receive(int source) {
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  auto sleep = std::chrono::microseconds(10);
  for (;;) {
    if (auto message = try_receive(source)) return std::move(*message);
    if (worker::termination_requested()) worker::exit_terminated();
    if (std::chrono::steady_clock::now() < spin_until) continue;
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, kMaxSleep);
  }
}

struct AsyncSend::Impl {
  MPI_Request request = MPI_REQUEST_NULL;
  std::string payload;
};

AsyncSend::AsyncSend() : m_impl(std::make_unique<Impl>()) {}

AsyncSend::~AsyncSend() {
  if (m_impl->request != MPI_REQUEST_NULL) MPI_Wait(&m_impl->request, MPI_STATUS_IGNORE);
}

void AsyncSend::wait() {
  if (m_impl->request != MPI_REQUEST_NULL) FLOTILLA_MPI(MPI_Wait(&m_impl->request, MPI_STATUS_IGNORE));
}

void AsyncSend::start(int destination, Tag tag, std::string payload) {
  wait();
  if (payload.size() > static_cast<std::size_t>(INT_MAX))
    throw MpiError("message of " + std::to_string(payload.size()) + " bytes is too large");
  m_impl->payload = std::move(payload);
  FLOTILLA_MPI(MPI_Isend(m_impl->payload.data(), static_cast<int>(m_impl->payload.size()), MPI_BYTE, destination, tag,
                         MPI_COMM_WORLD, &m_impl->request));
}

void broadcast(std::uint64_t& value, int root) {
  FLOTILLA_MPI(MPI_Bcast(&value, 1, MPI_UINT64_T, root, MPI_COMM_WORLD));
}

void broadcast(std::string& bytes, int root) {
  std::uint64_t size = bytes.size();
  broadcast(size, root);
  bytes.resize(size);
  for (std::uint64_t offset = 0; offset < size;) {  // MPI counts are ints: send in pieces
    const int piece = static_cast<int>(std::min<std::uint64_t>(size - offset, 1u << 30));
    FLOTILLA_MPI(MPI_Bcast(bytes.data() + offset, piece, MPI_BYTE, root, MPI_COMM_WORLD));
    offset += static_cast<std::uint64_t>(piece);
  }
}

}  // namespace flotilla::jobs::mpi
