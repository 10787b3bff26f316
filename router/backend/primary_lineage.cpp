#include "router/backend/primary_lineage.h"

#include <charconv>

#include <fmt/format.h>

#include "router/merge/info_text.h"

namespace santral::router {

namespace {

std::int64_t number(std::string_view text) {
  std::int64_t value = -1;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) return -1;
  return value;
}

bool no_id(std::string_view replid) {
  return replid.empty() || replid.find_first_not_of('0') == std::string_view::npos;
}

}  // namespace

ReplicationHistory read_replication_history(std::string_view info) {
  auto sections = parse_info_text(info);
  ReplicationHistory out;
  out.role = std::string(find_info_field(sections, "role"));
  out.replid = std::string(find_info_field(sections, "master_replid"));
  out.offset = number(find_info_field(sections, "master_repl_offset"));
  out.replid2 = std::string(find_info_field(sections, "master_replid2"));
  out.second_offset = number(find_info_field(sections, "second_repl_offset"));
  return out;
}

std::string changes_mark(std::string_view info) {
  auto sections = parse_info_text(info);
  auto changes = find_info_field(sections, "rdb_changes_since_last_save");
  if (changes.empty()) return {};
  return std::string(changes) + "@" + std::string(find_info_field(sections, "rdb_last_save_time"));
}

std::string_view lineage_name(Lineage lineage) {
  switch (lineage) {
    case Lineage::Descends:
      return "descends";
    case Lineage::NeverSynced:
      return "never_synced";
    case Lineage::OtherHistory:
      return "other_history";
    case Lineage::Behind:
      return "behind";
    case Lineage::Unverified:
      break;
  }
  return "unverified";
}

LineageVerdict judge_lineage(const PrimaryReading& old, std::string_view old_address,
                             std::string_view new_info, std::string_view new_info_error) {
  LineageVerdict verdict;
  verdict.read_offset = old.replid.empty() ? -1 : old.offset;
  if (old.replid.empty()) {
    verdict.why = fmt::format(
        "Santral cannot tell whether it has {}'s writes: it never read that primary's INFO "
        "replication ({})",
        old_address, old.error.empty() ? "no reading yet" : old.error);
    return verdict;
  }
  auto fresh = read_replication_history(new_info);
  if (!fresh.readable() || fresh.role != "master") {
    verdict.why = fmt::format(
        "Santral cannot tell whether it has {}'s writes: its INFO replication could not be "
        "read ({})",
        old_address,
        !new_info_error.empty() ? new_info_error
        : fresh.readable()      ? "role:" + fresh.role
                                : std::string("no master_replid or master_repl_offset"));
    return verdict;
  }
  // How far into the old history the new primary goes (-1: not at all).
  std::int64_t reaches = -1;
  if (fresh.replid == old.replid)
    reaches = fresh.offset;
  else if (fresh.replid2 == old.replid)
    reaches = fresh.second_offset - 1;
  if (reaches >= old.offset) {
    verdict.lineage = Lineage::Descends;
    verdict.why = fmt::format(
        "it has {}'s history up to offset {}, which covers offset {} that Santral last read there",
        old_address, reaches, old.offset);
    return verdict;
  }
  if (reaches >= 0) {
    verdict.lineage = Lineage::Behind;
    verdict.missing_bytes = old.offset - reaches;
    verdict.why = fmt::format(
        "it has {}'s history only up to offset {}, {} bytes short of offset {} that Santral last "
        "read there",
        old_address, reaches, verdict.missing_bytes, old.offset);
    return verdict;
  }
  // A replica that never synced has no history but its own start when it is promoted: its
  // offset was 0 (second_repl_offset 1), or it never was a replica at all (no replid2).
  if (no_id(fresh.replid2) || fresh.second_offset <= 1) {
    verdict.lineage = Lineage::NeverSynced;
    verdict.why = fmt::format(
        "it never synced with {} (it held no replication history when it was promoted; {} was "
        "at offset {} of {})",
        old_address, old_address, old.offset, old.replid);
    return verdict;
  }
  verdict.lineage = Lineage::OtherHistory;
  verdict.why = fmt::format(
      "its replication history ({} up to offset {}, then {}) is not {}'s ({} at offset {}): it "
      "never synced with it, or it synced from a primary Santral did not follow",
      fresh.replid2, fresh.second_offset - 1, fresh.replid, old_address, old.replid, old.offset);
  return verdict;
}

void PrimaryReadings::read(const std::string& address, std::string replid, std::int64_t offset) {
  std::lock_guard guard(lock_);
  auto& reading = readings_[address];
  reading.replid = std::move(replid);
  reading.offset = offset;
  reading.error.clear();
}

void PrimaryReadings::unread(const std::string& address, std::string why) {
  std::lock_guard guard(lock_);
  readings_[address].error = std::move(why);
}

void PrimaryReadings::forget(const std::string& address) {
  std::lock_guard guard(lock_);
  readings_.erase(address);
}

PrimaryReading PrimaryReadings::last(const std::string& address) const {
  std::lock_guard guard(lock_);
  auto found = readings_.find(address);
  return found == readings_.end() ? PrimaryReading{} : found->second;
}

}  // namespace santral::router
