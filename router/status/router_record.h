#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace santral::router {

// A router name already held by a live router of the fleet (its lease still alive).
class RouterNameTaken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One live router of the fleet, as it registers itself under /santral/<name>/routers/<router>,
// attached to its lease: the key goes when the lease expires.
struct RouterRecord {
  std::string name;
  std::string listen;
  std::string announce;  // where clients reach it (`announce:`; its listen address by default)
  std::string admin;
  long pid = 0;
  std::int64_t map_version = 0;      // the map version it serves (acknowledged)
  std::int64_t salting_version = 0;  // the salting it routes by, its old requests answered
  std::int64_t move_id = 0;          // the move it routes by (its document's create_revision)
  std::uint64_t move_epoch = 0;      // and the epoch of it, its old requests answered
  std::uint64_t keys_moved = 0;      // as the move's coordinator: what its walk moved so far
  std::int64_t lease = 0;            // its etcd lease
  std::int64_t lease_ttl_s = 0;
  std::string started;   // UTC, ISO 8601
  bool leaving = false;  // it stops: its lease ends with it, nobody need wait for it
  // With cluster.fence: acl, the Redis ACL user it reaches the shards as (one per lease): the
  // user the fleet shuts out when it goes on without this router.
  std::string fence_user;

  nlohmann::json to_json() const;
  static std::optional<RouterRecord> from_json(const std::string& text);  // nullopt: not one
};

// How this router names and shows itself, from its config: `name` (cluster.router; else its
// listen address, or the host's name and port when it listens on every address), `listen`,
// `announce` and `admin`.
RouterRecord own_record(const config::Config& config);

// A random 24-bit number drawn once per process: the suffix of a router's default name, and
// the high bits of its client ids in a fleet (so that ids are unique across the fleet's
// routers: CLIENT LIST and CLIENT KILL ID through any router).
std::uint32_t run_id();
// The first client id of this process, less one: 0 outside a fleet (ids 1, 2, ... as Redis
// gives them); run_id() << 39 in a fleet.
std::uint64_t client_id_base(const config::Config& config);

}  // namespace santral::router
