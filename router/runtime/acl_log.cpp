#include "router/runtime/acl_log.h"

#include <algorithm>
#include <array>

namespace santral::router {
namespace {

constexpr std::array<std::string_view, 4> kReasons = {"auth", "command", "key", "channel"};
constexpr std::array<std::string_view, 3> kContexts = {"toplevel", "multi", "lua"};
constexpr std::size_t kGroupAmong = 10;  // Redis looks this far back for a like entry
constexpr auto kGroupWithin = std::chrono::seconds(60);

bool alike(const AclLogEntry& a, const AclLogEntry& b) {
  return a.reason == b.reason && a.context == b.context && a.object == b.object &&
         a.username == b.username && b.created - a.created < kGroupWithin;
}

}  // namespace

std::string_view reason_name(AclLogReason reason) {
  return kReasons[static_cast<std::size_t>(reason)];
}

std::string_view context_name(AclLogContext context) {
  return kContexts[static_cast<std::size_t>(context)];
}

void AclLog::add(AclLogEntry entry) {
  std::lock_guard guard(lock_);
  std::size_t scan = std::min(kGroupAmong, entries_.size());
  for (std::size_t i = 0; i < scan; ++i) {
    if (!alike(entries_[i], entry)) continue;
    entry.count = entries_[i].count + 1;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  entries_.push_front(std::move(entry));
  if (entries_.size() > kMaxEntries) entries_.pop_back();
}

std::vector<AclLogEntry> AclLog::latest(std::size_t count) const {
  std::lock_guard guard(lock_);
  count = std::min(count, entries_.size());
  return {entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(count)};
}

void AclLog::reset() {
  std::lock_guard guard(lock_);
  entries_.clear();
}

}  // namespace santral::router
