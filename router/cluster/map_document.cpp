#include "router/cluster/map_document.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "santral/version.h"

namespace santral::router {

using nlohmann::json;

std::string encode_map(const MapDocument& map) {
  json document = {{"format", kMapFormat},
                   {"santral", std::string(kVersion)},
                   {"pushed_by", map.pushed_by},
                   {"config", map.config_text}};
  if (map.moved_from != 0) document["moved_from"] = map.moved_from;
  if (map.based_on != 0) document["based_on"] = map.based_on;
  if (!map.salt_naming.empty()) document["salt_naming"] = map.salt_naming;
  return document.dump(2);
}

DecodedMap decode_map(std::string_view key, const std::string& value) {
  DecodedMap out;
  auto fail = [&](std::string_view field, const std::string& problem) {
    out.error = fmt::format("etcd key {}: field {}: {}", key, field, problem);
    return out;
  };
  json document = json::parse(value, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    out.error = fmt::format(
        "etcd key {}: not a Santral map document (a JSON object with format and config); "
        "write maps with `santral map push FILE`",
        key);
    return out;
  }
  // The lineage first: a router that cannot read the rest still learns the fleet moved on.
  if (auto moved = document.find("moved_from"); moved != document.end() && moved->is_number())
    out.moved_from = moved->get<std::int64_t>();
  if (auto based = document.find("based_on"); based != document.end() && based->is_number())
    out.based_on = based->get<std::int64_t>();
  auto format = document.find("format");
  if (format == document.end() || !format->is_number_integer())
    return fail("format",
                fmt::format("missing or not a number; this Santral reads format {}", kMapFormat));
  int found = format->get<int>();
  if (found > kMapFormat)
    return fail("format", fmt::format("{} is from a newer Santral ({}); this one reads format {}: "
                                      "upgrade this router",
                                      found, document.value("santral", "?"), kMapFormat));
  if (found < kMapFormat)
    return fail("format", fmt::format("{} is from an older Santral; this one reads format {}: "
                                      "push the map again with `santral map push FILE`",
                                      found, kMapFormat));
  auto text = document.find("config");
  if (text == document.end() || !text->is_string())
    return fail("config", "missing or not a string (the shard map's YAML)");
  out.config_text = text->get<std::string>();
  out.pushed_by = document.value("pushed_by", "");
  if (auto naming = document.find("salt_naming"); naming != document.end()) {
    if (!naming->is_string())
      return fail("salt_naming",
                  "not a string (the shard map's YAML salted counters are named by)");
    out.salt_naming = naming->get<std::string>();
  }
  try {
    out.shared = config::parse_config(out.config_text, fmt::format("etcd key {} field config", key),
                                      config::ConfigFormat::Santral);
    if (!out.salt_naming.empty())
      config::parse_config(out.salt_naming, fmt::format("etcd key {} field salt_naming", key),
                           config::ConfigFormat::Santral);
  } catch (const config::ConfigError& e) {
    out.shared.reset();
    out.error = e.what();
  }
  return out;
}

}  // namespace santral::router
