#include "router/hotkeys/salting/salt_overrides_json.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace santral::router {

using nlohmann::json;

namespace {

constexpr int kSaltingFormat = 1;

json to_json(const std::optional<SaltOverrides::Salting>& salting) {
  if (!salting) return nullptr;
  return {{"salts", salting->salts},
          {"reply", config::salt_reply_name(salting->reply)},
          {"by", salted_by_name(salting->by)}};
}

json keys_of(const std::string& document) {
  if (document.empty()) return json::object();
  json parsed = json::parse(document, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("keys") ||
      !parsed["keys"].is_object())
    return json::object();  // a refused document is replaced by the next change
  return parsed["keys"];
}

}  // namespace

std::string encode_salt_overrides(const SaltOverrides& overrides) {
  json keys = json::object();
  for (const auto& [key, salting] : overrides.by_key) keys[key] = to_json(salting);
  return json{{"format", kSaltingFormat}, {"keys", keys}}.dump();
}

std::string apply_salt_change(const std::string& document, const SaltChange& change) {
  json keys = keys_of(document);
  if (change.forget)
    keys.erase(change.key);
  else
    keys[change.key] = to_json(change.salting);
  return json{{"format", kSaltingFormat}, {"keys", keys}}.dump();
}

DecodedSalting decode_salt_overrides(std::string_view where, const std::string& value) {
  DecodedSalting out;
  auto fail = [&](const std::string& field, const std::string& problem) {
    out.error = fmt::format("{}: field {}: {}", where, field, problem);
    return out;
  };
  json document = json::parse(value, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return fail("(document)", "not a JSON object; SANTRAL SALT and UNSALT write it");
  if (document.value("format", 0) != kSaltingFormat)
    return fail("format", fmt::format("expected {}", kSaltingFormat));
  auto keys = document.find("keys");
  if (keys == document.end() || !keys->is_object()) return fail("keys", "expected an object");
  auto overrides = std::make_shared<SaltOverrides>();
  for (const auto& [name, entry] : keys->items()) {
    std::string field = "keys." + name;
    if (entry.is_null()) {
      overrides->by_key[name] = std::nullopt;
      continue;
    }
    if (!entry.is_object() || !entry.contains("salts") || !entry["salts"].is_number_unsigned())
      return fail(field + ".salts", "expected a number of salts");
    SaltOverrides::Salting salting{};
    salting.salts = entry["salts"].get<std::uint32_t>();
    if (salting.salts < config::kMinSalts || salting.salts > config::kMaxSalts)
      return fail(field + ".salts",
                  fmt::format("expected {} to {}", config::kMinSalts, config::kMaxSalts));
    std::string reply = entry.value("reply", "estimate");
    if (reply != "estimate" && reply != "exact")
      return fail(field + ".reply", "expected estimate or exact");
    salting.reply = reply == "exact" ? config::SaltReply::Exact : config::SaltReply::Estimate;
    salting.by = entry.value("by", "command") == "auto" ? SaltedBy::Auto : SaltedBy::Command;
    overrides->by_key[name] = salting;
  }
  out.overrides = std::move(overrides);
  return out;
}

}  // namespace santral::router
