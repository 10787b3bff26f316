#include "router/hotkeys/salting/salting_state_file.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "router/hotkeys/salting/salt_overrides_json.h"
#include "router/resharding/state_files.h"

namespace santral::router {

SaltingStateFile::SaltingStateFile(const std::filesystem::path& config_path,
                                   const std::filesystem::path& state_file)
    : path_(state_file_path(config_path, state_file, ".salting.json")) {}

const SaltOverrides& SaltingStateFile::load() {
  kept_ = {};
  std::string error;
  auto text = read_state_file(path_, error);
  if (!error.empty())
    throw StartError(fmt::format(
        "{}: the run-time salting state file (hotkeys.state_file) cannot be read ({}); it names "
        "counters whose sub-keys were not folded back, so Santral does not start without it: "
        "make it readable",
        path_.string(), error));
  if (!text) return kept_;
  auto decoded = decode_salt_overrides(path_.string(), *text);
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
