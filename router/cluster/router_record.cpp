#include "router/cluster/router_record.h"

namespace santral::router {

nlohmann::json RouterRecord::to_json() const {
  return {{"name", name},
          {"listen", listen},
          {"admin", admin},
          {"pid", pid},
          {"map_version", map_version},
          {"salting_version", salting_version},
          {"move_id", move_id},
          {"move_epoch", move_epoch},
          {"keys_moved", keys_moved},
          {"lease", std::to_string(lease)},
          {"lease_ttl_s", lease_ttl_s},
          {"started", started},
          {"leaving", leaving}};
}

std::optional<RouterRecord> RouterRecord::from_json(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  RouterRecord record;
  try {
    record.name = json.value("name", "");
    record.listen = json.value("listen", "");
    record.admin = json.value("admin", "");
    record.pid = json.value("pid", 0L);
    record.map_version = json.value("map_version", std::int64_t{0});
    record.salting_version = json.value("salting_version", std::int64_t{0});
    record.move_id = json.value("move_id", std::int64_t{0});
    record.move_epoch = json.value("move_epoch", std::uint64_t{0});
    record.keys_moved = json.value("keys_moved", std::uint64_t{0});
    record.lease = std::stoll(json.value("lease", std::string("0")));
    record.lease_ttl_s = json.value("lease_ttl_s", std::int64_t{0});
    record.started = json.value("started", "");
    record.leaving = json.value("leaving", false);
  } catch (const std::exception&) {
    return std::nullopt;  // a field of another type, written by hand
  }
  return record;
}

}  // namespace santral::router
