#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "config/namespace/key_pattern.h"

namespace santral::config {

// What a write to a salted counter (INCR, INCRBY, ...) answers.
enum class SaltReply : std::uint8_t {
  // The written sub-key's new value times the number of sub-keys: one round trip, no extra
  // reads. See docs/hot-keys.md ("The reply to a write") for its error.
  Estimate,
  // The sum of every sub-key, read after the write: one GET per other sub-key.
  Exact,
};

// One `salting:` entry: a hot counter (or a pattern of them) spread over `salts` sub-keys.
struct SaltRule {
  std::string key;                    // an exact key, or
  std::optional<KeyPattern> pattern;  // every key matching `match:` (KeyPattern syntax)
  std::uint32_t salts = 2;            // sub-keys, the base key counting as the first
  SaltReply reply = SaltReply::Estimate;
};

// Bounds of a salt count, for the YAML and SANTRAL SALT alike.
inline constexpr std::uint32_t kMinSalts = 2;
inline constexpr std::uint32_t kMaxSalts = 1024;

// Automatic salting (`hotkeys.auto_salt:`): a key that only sees counter commands and whose
// write rate stays above `writes_per_sec` for `for_s` seconds is salted; once its write rate
// stays below `cold_writes_per_sec` for `cold_for_s` seconds it is unsalted (folded back).
struct AutoSaltSettings {
  bool enabled = false;
  std::uint32_t writes_per_sec = 10'000;
  std::uint32_t for_s = 10;
  std::uint32_t salts = 4;
  SaltReply reply = SaltReply::Estimate;
  std::uint32_t cold_writes_per_sec = 1'000;
  std::uint32_t cold_for_s = 60;
  std::uint32_t check_ms = 1'000;  // how often the workers' rates are merged and checked
};

// Always-on hot-key detection (`hotkeys:`).
struct HotKeySettings {
  bool enabled = true;
  std::uint32_t sample_every = 16;  // one access in this many is counted
  std::uint32_t capacity = 64;      // keys each worker's sketch tracks
  std::uint32_t window_s = 10;      // rates are over the last one to two windows
  AutoSaltSettings auto_salt;
  // Where a router alone keeps the counters salted at run time whose sub-keys may still hold
  // counts, so that a restart (or a crash) reads them whole; empty: `<config>.salting.json`
  // beside the config file; relative: to the config file's folder.
  std::filesystem::path state_file;
};

const char* salt_reply_name(SaltReply reply);

}  // namespace santral::config
