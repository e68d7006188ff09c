// PrivateDir.h — folders only this user can enter, for a backend's own files (manifests, job
// files): what another user can predict or swap must never reach a task's command line.
//
// make_private_dir creates PARENT/PREFIX-PID-XXXXXX with mkdtemp: a fresh name, mode 0700, never
// an existing folder, no symlink followed for the new name. PARENT itself must not be open to
// other users: owned by us, or writable by others only with the sticky bit (as /tmp is), so no
// one else can rename our folder away and put theirs in its place.
// remove_stale_private_dirs removes the folders of PREFIX whose process is gone (a SIGKILLed
// run leaves its folder behind; the next run of the campaign removes it).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace flotilla::jobs {

// Throws std::runtime_error naming the folder and the reason.
std::filesystem::path make_private_dir(const std::filesystem::path& parent, std::string_view prefix);

// Removes PARENT/PREFIX-PID-* folders of ours whose PID no longer runs; returns how many.
// Never follows a symlink, never touches another user's folder.
std::size_t remove_stale_private_dirs(const std::filesystem::path& parent, std::string_view prefix);

// Why `parent` may not hold a private folder, or "" when it may (pure over stat's fields).
std::string parent_refusal(unsigned mode, unsigned owner, unsigned me);

}  // namespace flotilla::jobs
