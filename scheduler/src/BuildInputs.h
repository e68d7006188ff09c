// BuildInputs.h — what a build reads that can change (build.inputs) and who owns a build folder.
//
// A build key (Builds.h) names the command and the parameter values; the sources it compiles are
// not in it. build.inputs lists them (files and folders, relative to the working folder), and
// their content's digest joins every build key and the results' fingerprint: a build is never
// reused from changed sources, and a resume over changed sources is refused, naming the setting.
// A build folder belongs to one campaign (claim_build_root): two campaigns sharing build.dir
// would otherwise build the same key over each other's binaries.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace flotilla::scheduler {

// FNV-1a 64 over each regular file's path (relative to `workdir`), size and bytes, and each
// symlink's target text, folders walked in name order without following links. Throws
// std::runtime_error naming a path that does not exist or cannot be read, or past the limits
// (100,000 files, 4 GiB).
std::string digest_build_inputs(const std::filesystem::path& workdir, const std::vector<std::string>& paths);

// Makes `build_root` the campaign's: creates it and its owner file (.flotilla-campaign, holding
// `campaign`), or checks that the owner file names `campaign`. Throws std::runtime_error naming
// the other campaign and the setting to change when the folder is another campaign's.
void claim_build_root(const std::filesystem::path& build_root, const std::string& campaign);

}  // namespace flotilla::scheduler
