#include "router/hotkeys/salting/salting_state_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/resharding/durable_write.h"

namespace santral::router {

SaltingStateFile::SaltingStateFile(const std::filesystem::path& config_path,
                                   const std::filesystem::path& state_file) {
  if (state_file.empty()) {
    path_ = config_path;
    path_ += ".salting.json";
  } else if (state_file.is_relative()) {
    path_ = config_path.parent_path() / state_file;
  } else {
    path_ = state_file;
  }
}

const SaltOverrides& SaltingStateFile::load() {
  kept_ = {};
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec) && !ec) return kept_;
  std::ifstream in(path_);
  if (ec || !in || std::filesystem::is_directory(path_, ec))
    throw StartError(fmt::format(
        "{}: the run-time salting state file (hotkeys.state_file) cannot be read ({}); it names "
        "counters whose sub-keys were not folded back, so Santral does not start without it: "
        "make it readable",
        path_.string(), ec ? ec.message() : std::strerror(errno)));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto decoded = decode_salt_overrides(path_.string(), text);
  if (!decoded.overrides)
    throw StartError(fmt::format(
        "{}; it names counters whose sub-keys were not folded back, so Santral does not start "
        "without it: restore it, or move it away after folding them (SANTRAL SALT, then UNSALT "
        "each key it names)",
        decoded.error));
  for (const auto& [key, salting] : decoded.overrides->by_key)
    if (salting) kept_.by_key[key] = salting;
  return kept_;
}

std::string SaltingStateFile::keep(const std::string& key, const SaltOverrides::Salting& salting) {
  auto before = kept_.by_key.find(key);
  if (before != kept_.by_key.end() && before->second && before->second->salts == salting.salts &&
      before->second->reply == salting.reply && before->second->by == salting.by)
    return {};
  auto previous = kept_;
  kept_.by_key[key] = salting;
  auto error = save();
  if (!error.empty()) kept_ = std::move(previous);
  return error;
}

void SaltingStateFile::forget(const std::string& key) {
  if (kept_.by_key.erase(key) == 0) return;
  if (auto error = save(); !error.empty())
    spdlog::warn(
        "{}: '{}' was folded back but stays in the file ({}); the next start salts it "
        "again, which loses nothing",
        path_.string(), key, error);
}

std::string SaltingStateFile::save() {
  auto error = write_durably(path_, encode_salt_overrides(kept_) + '\n');
  return error.empty() ? error : fmt::format("{}: {}", path_.string(), error);
}

}  // namespace santral::router
