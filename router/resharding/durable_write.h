#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace santral::router {

// Replaces `path` with `text` so that a crash at any moment leaves either the old file or the
// new one, and the new one survives a power loss once this returns: written to `path`.tmp,
// fsynced, renamed over `path`, then the folder fsynced. The state files (a move's ledger,
// the run-time salting) are written this way. Returns "" or what failed, naming the file.
std::string write_durably(const std::filesystem::path& path, std::string_view text);

}  // namespace santral::router
