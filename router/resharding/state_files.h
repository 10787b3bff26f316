#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace santral::router {

// The state files Santral keeps beside its config (a move's ledger, the run-time salting).

// Where one is: `state_file` as configured; relative, to the config file's folder; empty, the
// config file's path followed by `default_suffix` (".reshard.json").
std::filesystem::path state_file_path(const std::filesystem::path& config_path,
                                      const std::filesystem::path& state_file,
                                      std::string_view default_suffix);

// Its whole text; nullopt when there is no such file, or when it cannot be read (`error` then
// says why: the callers refuse to start, as the file may name what must not be forgotten).
std::optional<std::string> read_state_file(const std::filesystem::path& path, std::string& error);

// Replaces `path` with `text` so that a crash at any moment leaves either the old file or the
// new one, and the new one survives a power loss once this returns: written to `path`.tmp,
// fsynced, renamed over `path`, then the folder fsynced. The state files (a move's ledger,
// the run-time salting) are written this way. Returns "" or what failed, naming the file.
std::string write_durably(const std::filesystem::path& path, std::string_view text);

}  // namespace santral::router
