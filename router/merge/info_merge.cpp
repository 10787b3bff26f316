// INFO sent to every shard, answered with one INFO text that reads like one big server's.
//
// Sections come in fragment 0's order (a section only other shards list comes after them).
// How the fields of each section merge:
//   Keyspace      per db: keys, expires (any count) summed; avg_ttl is the average of the
//                 shards' avg_ttl weighted by their `expires`, since Redis averages the TTL
//                 over keys that have one (a shard without volatile keys reports 0).
//   Commandstats  per command: calls, usec, rejected_calls, failed_calls summed;
//                 usec_per_call recomputed as usec / calls with two decimals.
//   Errorstats    per error: count summed.
//   Clients, Memory, Stats, Persistence, CPU
//                 a field that is a number in every shard that lists it is summed (decimals,
//                 like used_cpu_sys, keep the most decimals any shard printed), except
//                 settings, flags, timestamps, durations, ratios and percentages, which keep
//                 fragment 0's value (see kept_from_first_shard); an `*_human` field is
//                 recomputed from its merged byte count. Anything else keeps fragment 0's text.
//   Others        Server, Replication, Cluster, Modules, Latencystats and unknown sections:
//                 the lines of the first shard that lists the section, unchanged.
// Then brief.info.overrides replace values, "# Shards" is added if asked, and
// brief.info.local_sections is appended.
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "protocol/arguments.h"
#include "router/merge/collecting_merge.h"
#include "router/merge/info_text.h"
#include "router/merge/merge_kinds.h"

namespace santral::router {
namespace {

using protocol::parse_integer;
using protocol::ReplyValue;
using Type = ReplyValue::Type;

struct MergedLine {
  std::string key;
  std::string value;
  bool has_value = true;
};

struct MergedSection {
  std::string_view name;
  std::vector<MergedLine> lines;
};

// One field as each shard that lists it gave it, in fragment order.
struct FieldValues {
  std::string_view key;
  bool has_value = true;
  std::vector<std::string_view> values;
};

// The same for a subfield of a value ("keys" in "keys=10,expires=2").
struct SubfieldValues {
  std::string_view name;
  std::vector<std::string_view> values;
};

enum class SectionRule { FirstShard, Numbers, Keyspace, Commandstats, Errorstats };

SectionRule rule_for(std::string_view section) {
  if (section == "Keyspace") return SectionRule::Keyspace;
  if (section == "Commandstats") return SectionRule::Commandstats;
  if (section == "Errorstats") return SectionRule::Errorstats;
  if (section == "Clients" || section == "Memory" || section == "Stats" ||
      section == "Persistence" || section == "CPU")
    return SectionRule::Numbers;
  return SectionRule::FirstShard;
}

// Fields of the summed sections that a sum would make wrong.
bool kept_from_first_shard(std::string_view key) {
  static constexpr std::string_view kExact[] = {
      "maxclients",
      "maxmemory",
      "maxmemory_policy",
      "mem_allocator",
      "total_system_memory",
      "loading",
      "async_loading",
      "aof_enabled",
      "io_threads_active",
      "active_defrag_running",
      "latest_fork_usec",
      "client_recent_max_input_buffer",
      "client_recent_max_output_buffer",
  };
  static constexpr std::string_view kSuffixes[] = {"_ratio",    "_perc",   "_time",
                                                   "_time_sec", "_status", "_policy"};
  if (std::find(std::begin(kExact), std::end(kExact), key) != std::end(kExact)) return true;
  return std::any_of(std::begin(kSuffixes), std::end(kSuffixes),
                     [key](std::string_view suffix) { return key.ends_with(suffix); });
}

struct Decimal {
  double value = 0;
  int decimals = 0;
};

// "12", "-3", "0.25": digits with at most one point inside.
std::optional<Decimal> read_decimal(std::string_view text) {
  const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  const std::size_t point = digits.find('.');
  const std::string_view whole = digits.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view{} : digits.substr(point + 1);
  const auto all_digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction)) return std::nullopt;
  if (point != std::string_view::npos && fraction.empty()) return std::nullopt;
  Decimal decimal;
  auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), decimal.value);
  if (ec != std::errc{}) return std::nullopt;
  decimal.decimals = static_cast<int>(fraction.size());
  return decimal;
}

// The sum of values that are all numbers; nullopt if one is not (or integers overflow).
std::optional<std::string> sum_numbers(const std::vector<std::string_view>& values) {
  std::int64_t integers = 0;
  bool all_integers = true;
  for (std::string_view text : values) {
    const std::optional<std::int64_t> value = parse_integer<std::int64_t>(text);
    if (!value) {
      all_integers = false;
      break;
    }
    if (__builtin_add_overflow(integers, *value, &integers)) return std::nullopt;
  }
  if (all_integers) return std::to_string(integers);

  double total = 0;
  int decimals = 0;
  for (std::string_view text : values) {
    const std::optional<Decimal> value = read_decimal(text);
    if (!value) return std::nullopt;
    total += value->value;
    decimals = std::max(decimals, value->decimals);
  }
  return fmt::format("{:.{}f}", total, decimals);
}

// Redis's bytesToHuman().
std::string bytes_to_human(std::uint64_t bytes) {
  static constexpr char kUnits[] = "KMGTP";
  if (bytes < 1024) return fmt::format("{}B", bytes);
  double scaled = static_cast<double>(bytes) / 1024;
  for (char unit : std::string_view(kUnits)) {
    if (scaled < 1024 || unit == 'P') return fmt::format("{:.2f}{}", scaled, unit);
    scaled /= 1024;
  }
  return fmt::format("{}B", bytes);
}

// Fields in first-seen order, fragment 0's first.
std::vector<FieldValues> gather_fields(const std::vector<const InfoSection*>& holders) {
  std::vector<FieldValues> fields;
  std::unordered_map<std::string_view, std::size_t> index;
  for (const InfoSection* section : holders) {
    if (section == nullptr) continue;
    for (const InfoLine& line : section->lines) {
      auto [at, added] = index.try_emplace(line.key, fields.size());
      if (added) fields.push_back({line.key, line.has_value, {}});
      if (line.has_value) fields[at->second].values.push_back(line.value);
    }
  }
  return fields;
}

std::vector<SubfieldValues> gather_subfields(const std::vector<std::string_view>& values) {
  std::vector<SubfieldValues> subfields;
  for (std::string_view value : values) {
    for (const InfoSubfield& part : split_subfields(value)) {
      auto same = [&part](const SubfieldValues& s) { return s.name == part.name; };
      auto at = std::find_if(subfields.begin(), subfields.end(), same);
      if (at == subfields.end())
        subfields.push_back({part.name, {part.value}});
      else
        at->values.push_back(part.value);
    }
  }
  return subfields;
}

std::int64_t subfield_integer(std::string_view value, std::string_view name) {
  for (const InfoSubfield& part : split_subfields(value))
    if (part.name == name) return parse_integer<std::int64_t>(part.value).value_or(0);
  return 0;
}

// "db0:keys=..,expires=..,avg_ttl=.." from each shard.
std::string merge_keyspace_avg_ttl(const std::vector<std::string_view>& values) {
  long double weighted = 0;
  std::int64_t expires = 0;
  for (std::string_view value : values) {
    const std::int64_t shard_expires = subfield_integer(value, "expires");
    if (shard_expires <= 0) continue;
    weighted += static_cast<long double>(shard_expires) *
                static_cast<long double>(subfield_integer(value, "avg_ttl"));
    expires += shard_expires;
  }
  return std::to_string(expires > 0 ? static_cast<std::int64_t>(weighted / expires) : 0);
}

// "calls=..,usec=..,usec_per_call=..,..": counts summed, the rest computed by `rule`.
std::string merge_subfields(SectionRule rule, const std::vector<std::string_view>& values) {
  std::vector<std::pair<std::string_view, std::string>> merged;
  for (const SubfieldValues& subfield : gather_subfields(values)) {
    std::optional<std::string> sum = sum_numbers(subfield.values);
    merged.emplace_back(subfield.name,
                        sum ? std::move(*sum) : std::string(subfield.values.front()));
  }
  const auto find = [&merged](std::string_view name) -> std::string* {
    for (auto& [key, value] : merged)
      if (key == name) return &value;
    return nullptr;
  };
  if (rule == SectionRule::Keyspace) {
    if (std::string* avg_ttl = find("avg_ttl")) *avg_ttl = merge_keyspace_avg_ttl(values);
  }
  if (rule == SectionRule::Commandstats) {
    std::string* per_call = find("usec_per_call");
    const std::string* calls = find("calls");
    const std::string* usec = find("usec");
    if (per_call != nullptr && calls != nullptr && usec != nullptr) {
      const std::int64_t call_count = parse_integer<std::int64_t>(*calls).value_or(0);
      const double micros = static_cast<double>(parse_integer<std::int64_t>(*usec).value_or(0));
      *per_call = fmt::format("{:.2f}", call_count > 0 ? micros / call_count : 0.0);
    }
  }
  std::string joined;
  for (const auto& [name, value] : merged) {
    if (!joined.empty()) joined.push_back(',');
    joined.append(name);
    joined.push_back('=');
    joined.append(value);
  }
  return joined;
}

// `*_human` next to a byte count shows the merged count.
void recompute_human_fields(std::vector<MergedLine>& lines) {
  std::unordered_map<std::string_view, const std::string*> values;
  for (const MergedLine& line : lines) values.emplace(line.key, &line.value);
  for (MergedLine& line : lines) {
    const std::string_view key = line.key;
    if (!key.ends_with("_human")) continue;
    auto bytes = values.find(key.substr(0, key.size() - 6));
    if (bytes == values.end()) continue;
    const std::optional<std::int64_t> count = parse_integer<std::int64_t>(*bytes->second);
    if (count && *count >= 0) line.value = bytes_to_human(static_cast<std::uint64_t>(*count));
  }
}

// `holders[i]` is fragment i's section of that name, or nullptr.
std::vector<MergedLine> merge_section(std::string_view name,
                                      const std::vector<const InfoSection*>& holders) {
  std::vector<MergedLine> lines;
  const SectionRule rule = rule_for(name);
  if (rule == SectionRule::FirstShard) {
    const auto first = std::find_if(holders.begin(), holders.end(),
                                    [](const InfoSection* s) { return s != nullptr; });
    for (const InfoLine& line : (*first)->lines)
      lines.push_back({std::string(line.key), std::string(line.value), line.has_value});
    return lines;
  }
  for (const FieldValues& field : gather_fields(holders)) {
    MergedLine& line = lines.emplace_back();
    line.key = field.key;
    line.has_value = field.has_value;
    if (!field.has_value || field.values.empty()) continue;
    if (rule != SectionRule::Numbers) {
      line.value = merge_subfields(rule, field.values);
      continue;
    }
    std::optional<std::string> sum;
    if (!kept_from_first_shard(field.key)) sum = sum_numbers(field.values);
    line.value = sum ? std::move(*sum) : std::string(field.values.front());
  }
  if (rule == SectionRule::Numbers) recompute_human_fields(lines);
  return lines;
}

void append_section(std::string& text, std::string_view name,
                    const std::vector<MergedLine>& lines) {
  if (!text.empty()) text.append("\r\n");
  if (!name.empty()) fmt::format_to(std::back_inserter(text), "# {}\r\n", name);
  for (const MergedLine& line : lines) {
    text.append(line.key);
    if (line.has_value) {
      text.push_back(':');
      text.append(line.value);
    }
    text.append("\r\n");
  }
}

bool is_info_text(const ReplyValue& value) {
  return value.type == Type::BulkString || value.type == Type::VerbatimString;
}

std::string_view info_text(const ReplyValue& value) {
  return value.type == Type::VerbatimString ? value.text.substr(4) : value.text;
}

class InfoMerge final : public CollectingMerge {
 public:
  using CollectingMerge::CollectingMerge;

 private:
  void merge(std::string& out) override {
    if (write_failed_shards(is_info_text, out)) return;
    for (const FragmentReply& reply : replies())
      shards_.push_back(parse_info_text(info_text(reply.value)));

    std::vector<MergedSection> sections = merge_sections();
    apply_overrides(sections);
    std::string text;
    for (const MergedSection& section : sections) append_section(text, section.name, section.lines);
    if (brief().info.shards_section) append_section(text, "Shards", shards_lines());
    if (!brief().info.local_sections.empty()) {
      if (!text.empty()) text.append("\r\n");
      text.append(brief().info.local_sections);
    }

    if (value(0).type == Type::VerbatimString) {
      const std::string_view format = value(0).text.substr(0, 4);  // "txt:"
      fmt::format_to(std::back_inserter(out), "={}\r\n{}", format.size() + text.size(), format);
      out.append(text);
      out.append("\r\n");
    } else {
      protocol::RespWriter(out).bulk(text);
    }
  }

  std::vector<MergedSection> merge_sections() const {
    std::vector<std::string_view> names;
    for (const std::vector<InfoSection>& shard : shards_)
      for (const InfoSection& section : shard)
        if (std::find(names.begin(), names.end(), section.name) == names.end())
          names.push_back(section.name);

    std::vector<MergedSection> sections;
    std::vector<const InfoSection*> holders(shards_.size());
    for (std::string_view name : names) {
      for (std::size_t i = 0; i < shards_.size(); ++i)
        holders[i] = find_info_section(shards_[i], name);
      sections.push_back({name, merge_section(name, holders)});
    }
    return sections;
  }

  void apply_overrides(std::vector<MergedSection>& sections) const {
    for (const auto& [key, value] : brief().info.overrides)
      for (MergedSection& section : sections)
        for (MergedLine& line : section.lines)
          if (line.has_value && line.key == key) line.value = value;
  }

  // shard_<i>:name=..,keys=..,used_memory=..,connected_clients=..,role=..
  std::vector<MergedLine> shards_lines() const {
    std::vector<MergedLine> lines;
    for (std::uint32_t i = 0; i < shards_.size(); ++i) {
      const std::vector<InfoSection>& sections = shards_[i];
      std::int64_t keys = 0;
      if (const InfoSection* keyspace = find_info_section(sections, "Keyspace"))
        for (const InfoLine& db : keyspace->lines)
          if (__builtin_add_overflow(keys, subfield_integer(db.value, "keys"), &keys)) keys = 0;
      const auto field_or = [&sections](std::string_view key, std::string_view missing) {
        const std::string_view value = find_info_field(sections, key);
        return value.empty() ? missing : value;
      };
      lines.push_back({fmt::format("shard_{}", i),
                       fmt::format("name={},keys={},used_memory={},connected_clients={},role={}",
                                   shard(i), keys, field_or("used_memory", "0"),
                                   field_or("connected_clients", "0"), field_or("role", "unknown")),
                       true});
    }
    return lines;
  }

  std::vector<std::vector<InfoSection>> shards_;  // fragment i's INFO, views into its reply
};

}  // namespace

std::unique_ptr<ReplyMerge> make_info_merge(MergeBrief brief) {
  return std::make_unique<InfoMerge>(std::move(brief));
}

}  // namespace santral::router
