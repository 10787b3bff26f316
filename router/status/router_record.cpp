#include "router/status/router_record.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>

namespace santral::router {

std::uint32_t run_id() {
  static const std::uint32_t id = std::random_device{}() & 0xffffff;
  return id;
}

std::uint64_t client_id_base(const config::Config& config) {
  if (config.cluster.etcd.empty()) return 0;
  return static_cast<std::uint64_t>(run_id()) << 39;
}

RouterRecord own_record(const config::Config& config) {
  RouterRecord self;
  std::string listen =
      config.plain_listener
          ? config.listen.text()
          : config::Endpoint{config.tls.listen_host, config.tls.listen_port}.text();
  self.name = config.cluster.router;
  if (self.name.empty()) {
    // Listening on every address (in a container): the host's name tells routers apart.
    std::string host = config.plain_listener ? config.listen.host : config.tls.listen_host;
    std::uint16_t port = config.plain_listener ? config.listen.port : config.tls.listen_port;
    char name[256] = {};
    if ((host == "0.0.0.0" || host == "::") && ::gethostname(name, sizeof name - 1) == 0)
      self.name = config::Endpoint{name, port}.text();
    else
      self.name = listen;
    // Sidecars all listen on 127.0.0.1:6380: an id of this start keeps the names apart.
    self.name += fmt::format("-{:06x}", run_id());
  }
  self.listen = listen;
  self.announce = config.announce ? config.announce->text() : listen;
  if (config.admin.listen.port != 0) self.admin = config.admin.listen.text();
  return self;
}

nlohmann::json RouterRecord::to_json() const {
  return {{"name", name},
          {"listen", listen},
          {"announce", announce},
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
          {"leaving", leaving},
          {"fence_user", fence_user}};
}

std::optional<RouterRecord> RouterRecord::from_json(const std::string& text) {
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  RouterRecord record;
  try {
    record.name = json.value("name", "");
    record.listen = json.value("listen", "");
    record.announce = json.value("announce", record.listen);
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
    record.fence_user = json.value("fence_user", "");
  } catch (const std::exception&) {
    return std::nullopt;  // a field of another type, written by hand
  }
  return record;
}

}  // namespace santral::router
