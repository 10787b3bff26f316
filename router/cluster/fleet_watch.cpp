#include "router/cluster/fleet_watch.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "router/backend/lease_clock.h"
#include "router/cluster/move_document.h"
#include "router/cluster/shard_fence.h"

namespace santral::router {

FleetKeys::FleetKeys(const config::ClusterSettings& settings, const std::string& router)
    : map(settings.prefix() + "map"),
      salting(settings.prefix() + "salting"),
      move(settings.prefix() + "move"),
      coordinator(settings.prefix() + "coordinator"),
      routers(settings.prefix() + "routers/"),
      self(routers + router) {}

FleetWatch::FleetWatch(const config::ClusterSettings& settings, RouterRecord self, EtcdClient& etcd)
    : settings_(settings),
      keys_(settings, self.name),
      name_(self.name),
      etcd_(etcd),
      self_(std::move(self)) {
  self_.lease_ttl_s = settings_.lease_ttl.count();
}

void FleetWatch::start(boost::asio::io_context& home, FleetHooks hooks) {
  home_ = &home;
  hooks_ = std::move(hooks);
}

std::optional<FleetJoined> FleetWatch::first_read(const std::string& document, bool& published) {
  FleetJoined joined;
  auto range = etcd_.range(settings_.prefix(), true);
  for (auto& kv : range.kvs) {
    if (kv.key == keys_.map)
      joined.map = std::move(kv);
    else if (kv.key == keys_.salting)
      joined.salting = std::move(kv);
    else if (kv.key == keys_.move)
      joined.move = std::move(kv);
    else if (kv.key.starts_with(keys_.routers) && kv.key != keys_.self)
      ++joined.others;
  }
  if (!joined.map && !document.empty() && !published) {
    // The first router against an empty prefix publishes its file's map; when another was
    // first, the next read finds that one.
    published = etcd_.put_if(keys_.map, document, 0).has_value();
    return std::nullopt;
  }
  joined.published = published;
  seen_map_ = joined.map ? joined.map->mod_revision : 0;
  seen_map_published_ = seen_map_;
  seen_salting_ = joined.salting ? joined.salting->mod_revision : 0;
  seen_move_ = joined.move ? joined.move->mod_revision : 0;
  return joined;
}

bool FleetWatch::register_self(bool create) {
  RouterRecord record;
  {
    std::lock_guard guard(mutex_);
    if (!create && !self_dirty_) return true;
    record = self_;
    self_dirty_ = false;
  }
  auto text = record.to_json().dump();
  try {
    if (!create)
      return etcd_
          .txn({{keys_.self, EtcdClient::Compare::Target::Lease, record.lease, {}}},
               {{keys_.self, text, record.lease}}, {})
          .has_value();
    if (etcd_.put_if(keys_.self, text, 0, record.lease)) return true;
    auto held = etcd_.range(keys_.self);
    std::int64_t lease = held.kvs.empty() ? 0 : held.kvs.front().lease;
    if (lease == record.lease) return true;
    // This process's own earlier lease (a join that raced a keepalive's news): it goes.
    if (std::find(granted_.begin(), granted_.end(), lease) != granted_.end()) {
      etcd_.revoke(lease);
      if (etcd_.put_if(keys_.self, text, 0, record.lease)) return true;
    }
    etcd_.revoke(record.lease);
    {
      std::lock_guard guard(mutex_);
      self_.lease = 0;
    }
    throw RouterNameTaken(fmt::format(
        "router name '{}' is held by a live router of fleet '{}' (its lease {}); give this "
        "one another cluster.router, or leave it out to get a name unique to this process",
        name_, settings_.name, lease));
  } catch (const EtcdUnavailable&) {
    std::lock_guard guard(mutex_);
    self_dirty_ = true;
    throw;
  }
}

void FleetWatch::lease_taken(std::int64_t lease, std::string fence_user) {
  granted_.push_back(lease);
  std::lock_guard guard(mutex_);
  self_.lease = lease;
  self_.leaving = false;
  // A new lease, a new shard user: the old one may have been shut out meanwhile.
  if (fence_) self_.fence_user = std::move(fence_user);
  self_dirty_ = true;
}

void FleetWatch::leave() {
  {
    std::lock_guard guard(mutex_);
    if (self_.lease == 0) return;
    self_.leaving = true;
    self_dirty_ = true;
  }
  register_self(false);
}

std::int64_t FleetWatch::lease() const {
  std::lock_guard guard(mutex_);
  return self_.lease;
}

bool FleetWatch::acknowledge(std::int64_t version) {
  std::lock_guard guard(mutex_);
  if (self_.map_version == version) return false;
  self_.map_version = version;
  return self_dirty_ = true;
}

bool FleetWatch::acknowledge_salting(std::int64_t version) {
  std::lock_guard guard(mutex_);
  if (self_.salting_version >= version) return false;
  self_.salting_version = version;
  return self_dirty_ = true;
}

bool FleetWatch::acknowledge_move(std::int64_t move_id, std::uint64_t epoch) {
  std::lock_guard guard(mutex_);
  if (self_.move_id == move_id && self_.move_epoch >= epoch) return false;
  self_.move_id = move_id;
  self_.move_epoch = epoch;
  return self_dirty_ = true;
}

void FleetWatch::report_walk(std::uint64_t keys_moved) {
  std::lock_guard guard(mutex_);
  if (self_.keys_moved == keys_moved) return;
  self_.keys_moved = keys_moved;
  self_dirty_ = true;
}

std::int64_t FleetWatch::map_version() const {
  std::lock_guard guard(mutex_);
  return self_.map_version;
}

void FleetWatch::poll() {
  auto range = etcd_.range(settings_.prefix(), true);
  std::vector<RouterRecord> routers;
  std::string records;
  std::optional<EtcdKeyValue> move, holder;
  for (auto& kv : range.kvs) {
    if (kv.key == keys_.move) move = kv;
    if (kv.key == keys_.coordinator) holder = kv;
    if (kv.key == keys_.map && kv.mod_revision != seen_map_) {
      seen_map_ = kv.mod_revision;
      seen_map_published_ = seen_map_;
      if (hooks_.map_changed)
        boost::asio::post(*home_, [hook = hooks_.map_changed, kv] { hook(kv); });
    } else if (kv.key == keys_.salting && kv.mod_revision != seen_salting_) {
      seen_salting_ = kv.mod_revision;
      if (hooks_.salting_changed)
        boost::asio::post(*home_, [hook = hooks_.salting_changed, kv] { hook(kv); });
    } else if (kv.key.starts_with(keys_.routers)) {
      if (auto record = RouterRecord::from_json(kv.value)) routers.push_back(std::move(*record));
      records += kv.value + "\n";
    }
  }
  std::int64_t move_revision = move ? move->mod_revision : 0;
  if (move_revision != seen_move_) {
    seen_move_ = move_revision;
    if (hooks_.move_changed)
      boost::asio::post(*home_, [hook = hooks_.move_changed, move] { hook(move); });
  }
  elect(move, holder);
  bool changed = records != routers_seen_;
  routers_seen_ = std::move(records);
  note_departures(routers);
  {
    std::lock_guard guard(mutex_);
    routers_ = std::move(routers);
  }
  if (changed && hooks_.routers_changed) boost::asio::post(*home_, hooks_.routers_changed);
}

// While a move is approved (moving or aborting), one live router drives it: the first to
// create the coordinator key on its lease. When that router's lease ends, the key goes with
// it and another takes over.
void FleetWatch::elect(const std::optional<EtcdKeyValue>& move,
                       const std::optional<EtcdKeyValue>& holder) {
  std::int64_t lease = this->lease();
  bool approved = false;
  if (move) {
    std::string error;
    auto document = decode_move(keys_.move, move->value, error);
    approved = document && document->phase != MoveDocument::Phase::Planned;
  }
  bool mine = holder && holder->value == name_ && holder->lease == lease;
  if (!mine && approved && !holder && lease != 0)
    mine = etcd_.put_if(keys_.coordinator, name_, 0, lease).has_value();
  if (mine && !approved) {
    etcd_.erase(keys_.coordinator);  // the move is over
    mine = false;
  }
  if (mine == coordinating_) return;
  spdlog::info("fleet '{}': this router {} the move's coordinator", settings_.name,
               mine ? "is now" : "is no longer");
  coordinate(mine);
}

void FleetWatch::lease_lost() {
  if (coordinating_) coordinate(false);
}

void FleetWatch::coordinate(bool mine) {
  coordinating_ = mine;
  if (hooks_.coordinating)
    boost::asio::post(*home_, [hook = hooks_.coordinating, mine] { hook(mine); });
}

// Registrations that went away without saying the router leaves: an expired lease. Such a
// router may still believe it serves until its own 2/3 of the lease have passed; the fleet
// waits a lease and a margin before going on without it (FleetView::departed).
void FleetWatch::note_departures(const std::vector<RouterRecord>& routers) {
  auto now = lease_clock_ns();
  auto keep_for = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.lease_ttl +
                                                                       std::chrono::seconds(1))
                      .count();
  std::lock_guard guard(mutex_);
  for (const auto& seen : seen_routers_) {
    bool still = std::any_of(routers.begin(), routers.end(), [&](const RouterRecord& r) {
      return r.name == seen.name && r.lease == seen.lease;
    });
    if (!still && !seen.leaving && seen.lease != self_.lease) departures_.push_back({seen, now});
  }
  // With cluster.fence: acl a departure is waited for until its user is shut out as well.
  std::erase_if(departures_, [&](const Departure& d) {
    return now - d.at_ns > keep_for && (d.fenced || !fence_);
  });
  seen_routers_ = routers;
}

// Shuts the departed routers' shard users out on every shard (cluster.fence: acl), on the
// agent's thread; one not yet done on every primary keeps its departure in departed().
void FleetWatch::fence_departed() {
  if (!fence_) return;
  std::vector<std::string> users;
  {
    std::lock_guard guard(mutex_);
    for (const auto& d : departures_)
      if (!d.fenced && !d.record.fence_user.empty()) users.push_back(d.record.fence_user);
  }
  for (const auto& user : users) {
    if (!fence_->shut_out(user)) continue;
    spdlog::warn("fleet '{}': shut {} out of every shard (its router's lease expired)",
                 settings_.name, user);
    std::lock_guard guard(mutex_);
    for (auto& d : departures_)
      if (d.record.fence_user == user) d.fenced = true;
  }
  std::lock_guard guard(mutex_);
  for (auto& d : departures_)
    if (d.record.fence_user.empty()) d.fenced = true;  // a router without a user (fence: lease)
}

std::vector<RouterRecord> FleetWatch::routers() const {
  std::lock_guard guard(mutex_);
  return routers_;
}

std::vector<RouterRecord> FleetWatch::departed() const {
  std::lock_guard guard(mutex_);
  std::vector<RouterRecord> records;
  for (const auto& departure : departures_) records.push_back(departure.record);
  return records;
}

}  // namespace santral::router
