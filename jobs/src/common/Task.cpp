// Task.cpp — the names of task statuses, as they appear in result rows and logs.
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

std::string_view to_string(TaskStatus status) {
  switch (status) {
    case TaskStatus::ok:
      return "ok";
    case TaskStatus::failed:
      return "failed";
    case TaskStatus::timeout:
      return "timeout";
    case TaskStatus::cancelled:
      return "cancelled";
    case TaskStatus::lost:
      return "lost";
  }
  return "unknown";
}

}  // namespace flotilla::jobs
