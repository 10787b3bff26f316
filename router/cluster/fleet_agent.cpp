#include "router/cluster/fleet_agent.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "router/cluster/move_document.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

// One etcd call waits at most this long for a member: well inside the lease, so that a
// router tries every member several times before its lease can run out.
std::chrono::milliseconds call_timeout(const config::ClusterSettings& settings) {
  auto fifth = std::chrono::duration_cast<std::chrono::milliseconds>(settings.lease_ttl) / 5;
  return std::clamp(fifth, std::chrono::milliseconds(200), std::chrono::milliseconds(1000));
}

}  // namespace

FleetAgent::FleetAgent(config::ClusterSettings settings, RouterRecord self)
    : settings_(std::move(settings)),
      router_name_(self.name),
      map_key_(settings_.prefix() + "map"),
      salting_key_(settings_.prefix() + "salting"),
      move_key_(settings_.prefix() + "move"),
      coordinator_key_(settings_.prefix() + "coordinator"),
      routers_prefix_(settings_.prefix() + "routers/"),
      self_key_(routers_prefix_ + self.name),
      etcd_(settings_.etcd, call_timeout(settings_)),
      self_(std::move(self)) {
  self_.lease_ttl_s = settings_.lease_ttl.count();
}

FleetAgent::~FleetAgent() {
  stop();
}

FleetAgent::Joined FleetAgent::join(const std::string& document) {
  auto deadline = Clock::now() + settings_.start_timeout;
  bool published = false;
  for (;;) {
    try {
      // Registered first, so that a move approved from here on waits for this router.
      if (self_.lease == 0) take_lease(false);
      register_self();
      Joined joined;
      auto range = etcd_.range(settings_.prefix(), true);
      for (auto& kv : range.kvs) {
        if (kv.key == map_key_)
          joined.map = std::move(kv);
        else if (kv.key == salting_key_)
          joined.salting = std::move(kv);
        else if (kv.key == move_key_)
          joined.move = std::move(kv);
      }
      if (!joined.map && !document.empty() && !published) {
        // The first router against an empty prefix publishes its file's map; when another
        // was first, the next read finds that one.
        published = etcd_.put_if(map_key_, document, 0).has_value();
        continue;
      }
      joined.published = published;
      seen_map_ = joined.map ? joined.map->mod_revision : 0;
      seen_salting_ = joined.salting ? joined.salting->mod_revision : 0;
      seen_move_ = joined.move ? joined.move->mod_revision : 0;
      last_answer_ = Clock::now();
      return joined;
    } catch (const EtcdUnavailable& e) {
      if (Clock::now() >= deadline) throw;
      spdlog::warn("fleet '{}': etcd does not answer yet ({}); trying again", settings_.name,
                   e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
}

void FleetAgent::start(boost::asio::io_context& home, Hooks hooks,
                       std::atomic<std::int64_t>* serve_until) {
  home_ = &home;
  hooks_ = std::move(hooks);
  serve_until_ = serve_until;
  confirmed(last_keepalive_);
  thread_ = std::thread([this] { run(); });
}

void FleetAgent::stop() {
  {
    std::lock_guard guard(lock_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (self_.lease != 0) {
    try {
      etcd_.revoke(self_.lease);  // the others see this router leave at once
    } catch (const EtcdUnavailable&) {
    }
  }
}

void FleetAgent::propose(std::string key, std::string value, std::int64_t expected, Proposed done) {
  {
    std::lock_guard guard(lock_);
    jobs_.push_back(
        {std::move(key), std::move(value), expected, nullptr, nullptr, std::move(done)});
  }
  wake_.notify_all();
}

void FleetAgent::update(std::string key, Change change, Proposed done) {
  {
    std::lock_guard guard(lock_);
    jobs_.push_back({std::move(key), {}, 0, std::move(change), nullptr, std::move(done)});
  }
  wake_.notify_all();
}

void FleetAgent::call(Action action, Proposed done) {
  {
    std::lock_guard guard(lock_);
    jobs_.push_back({{}, {}, 0, nullptr, std::move(action), std::move(done)});
  }
  wake_.notify_all();
}

void FleetAgent::acknowledge_move(std::int64_t move_id, std::uint64_t epoch) {
  std::lock_guard guard(lock_);
  if (self_.move_id == move_id && self_.move_epoch >= epoch) return;
  self_.move_id = move_id;
  self_.move_epoch = epoch;
  self_dirty_ = true;
  wake_.notify_all();
}

void FleetAgent::report_walk(std::uint64_t keys_moved) {
  std::lock_guard guard(lock_);
  if (self_.keys_moved == keys_moved) return;
  self_.keys_moved = keys_moved;
  self_dirty_ = true;
}

void FleetAgent::acknowledge_salting(std::int64_t version) {
  std::lock_guard guard(lock_);
  if (self_.salting_version >= version) return;
  self_.salting_version = version;
  self_dirty_ = true;
  wake_.notify_all();
}

void FleetAgent::acknowledge(std::int64_t version) {
  std::lock_guard guard(lock_);
  if (self_.map_version == version) return;
  self_.map_version = version;
  self_dirty_ = true;
  wake_.notify_all();
}

FleetAgent::View FleetAgent::view() const {
  std::lock_guard guard(lock_);
  View view = view_;
  view.lease = self_.lease;
  view.silent_ms = std::chrono::duration<double, std::milli>(Clock::now() - last_answer_).count();
  return view;
}

void FleetAgent::run() {
  bool quick = true;  // the first round at once, and right after a proposal
  for (;;) {
    std::deque<Job> jobs;
    {
      std::unique_lock guard(lock_);
      if (!quick)
        wake_.wait_for(guard, settings_.poll,
                       [this] { return stopping_ || !jobs_.empty() || self_dirty_; });
      if (stopping_) return;
      jobs.swap(jobs_);
    }
    quick = !jobs.empty();
    for (auto& job : jobs) carry_out(std::move(job));
    try {
      keep_lease();
      register_self();
      poll();
      if (rejoined_at_) {
        auto asked = *std::exchange(rejoined_at_, std::nullopt);
        boost::asio::post(*home_, [this, asked] {
          auto confirm = [this, asked] {
            rejoining_ = false;
            confirmed(asked);
          };
          if (hooks_.rejoined)
            hooks_.rejoined(confirm);
          else
            confirm();
        });
      }
      std::lock_guard guard(lock_);
      if (!view_.in_touch && !view_.last_error.empty())
        spdlog::info("fleet '{}': etcd answers again ({})", settings_.name, etcd_.member());
      view_.in_touch = true;
      view_.last_error.clear();
      view_.member = etcd_.member();
      last_answer_ = Clock::now();
    } catch (const EtcdUnavailable& e) {
      // etcd down as a whole (or without quorum) cannot expire anyone's lease: serve on.
      if (e.all_down()) confirmed(Clock::now());
      std::lock_guard guard(lock_);
      if (view_.in_touch || view_.last_error.empty())
        spdlog::warn("fleet '{}': lost etcd ({}); serving with map version {} meanwhile",
                     settings_.name, e.what(), self_.map_version);
      view_.in_touch = false;
      view_.last_error = e.what();
    }
  }
}

void FleetAgent::confirmed(Clock::time_point asked) {
  if (serve_until_ == nullptr || rejoining_) return;
  auto until = asked + settings_.lease_ttl * 2 / 3;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count();
  auto previous = serve_until_->load();
  while (ns > previous && !serve_until_->compare_exchange_weak(previous, ns)) {
  }
}

void FleetAgent::take_lease(bool rejoining) {
  auto asked = Clock::now();
  auto lease = etcd_.grant_lease(settings_.lease_ttl);
  last_keepalive_ = asked;
  {
    std::lock_guard guard(lock_);
    self_.lease = lease;
    self_dirty_ = true;
  }
  if (!rejoining) return confirmed(asked);
  // Left out meanwhile: serve again only once what changed has been read and taken, after
  // the server has handled what this round's poll posts to it.
  rejoining_ = true;
  rejoined_at_ = asked;
}

void FleetAgent::keep_lease() {
  auto now = Clock::now();
  std::int64_t lease;
  {
    std::lock_guard guard(lock_);
    lease = self_.lease;
  }
  if (lease != 0 && now - last_keepalive_ < settings_.lease_ttl / 6) return;
  if (lease != 0 && etcd_.keep_alive(lease)) {
    last_keepalive_ = now;
    confirmed(now);
    return;
  }
  if (lease != 0)
    spdlog::warn(
        "fleet '{}': this router's lease {} had expired (etcd did not hear from it for "
        "{} s); joining again",
        settings_.name, lease, settings_.lease_ttl.count());
  if (lease != 0 && coordinating_) {
    coordinating_ = false;  // the coordinator key went with the lease
    if (hooks_.coordinating)
      boost::asio::post(*home_, [hook = hooks_.coordinating] { hook(false); });
  }
  take_lease(lease != 0);
}

void FleetAgent::register_self() {
  RouterRecord record;
  {
    std::lock_guard guard(lock_);
    if (!self_dirty_) return;
    record = self_;
    self_dirty_ = false;
  }
  try {
    etcd_.put(self_key_, record.to_json().dump(), record.lease);
  } catch (const EtcdUnavailable&) {
    std::lock_guard guard(lock_);
    self_dirty_ = true;
    throw;
  }
}

void FleetAgent::poll() {
  auto range = etcd_.range(settings_.prefix(), true);
  std::vector<RouterRecord> routers;
  std::string records;
  std::optional<EtcdKeyValue> move, holder;
  for (auto& kv : range.kvs) {
    if (kv.key == move_key_) move = kv;
    if (kv.key == coordinator_key_) holder = kv;
    if (kv.key == map_key_ && kv.mod_revision != seen_map_) {
      seen_map_ = kv.mod_revision;
      if (hooks_.map_changed)
        boost::asio::post(*home_, [hook = hooks_.map_changed, kv] { hook(kv); });
    } else if (kv.key == salting_key_ && kv.mod_revision != seen_salting_) {
      seen_salting_ = kv.mod_revision;
      if (hooks_.salting_changed)
        boost::asio::post(*home_, [hook = hooks_.salting_changed, kv] { hook(kv); });
    } else if (kv.key.starts_with(routers_prefix_)) {
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
  {
    std::lock_guard guard(lock_);
    view_.routers = std::move(routers);
  }
  if (changed && hooks_.routers_changed) boost::asio::post(*home_, hooks_.routers_changed);
}

// While a move is approved (moving or aborting), one live router drives it: the first to
// create the coordinator key on its lease. When that router's lease ends, the key goes with
// it and another takes over.
void FleetAgent::elect(const std::optional<EtcdKeyValue>& move,
                       const std::optional<EtcdKeyValue>& holder) {
  std::int64_t lease;
  {
    std::lock_guard guard(lock_);
    lease = self_.lease;
  }
  bool approved = false;
  if (move) {
    std::string error;
    auto document = decode_move(move_key_, move->value, error);
    approved = document && document->phase != MoveDocument::Phase::Planned;
  }
  bool mine = holder && holder->value == router_name_ && holder->lease == lease;
  if (!mine && approved && !holder && lease != 0)
    mine = etcd_.put_if(coordinator_key_, router_name_, 0, lease).has_value();
  if (mine && !approved) {
    etcd_.erase(coordinator_key_);  // the move is over
    mine = false;
  }
  if (mine == coordinating_) return;
  coordinating_ = mine;
  spdlog::info("fleet '{}': this router {} the move's coordinator", settings_.name,
               mine ? "is now" : "is no longer");
  if (hooks_.coordinating)
    boost::asio::post(*home_, [hook = hooks_.coordinating, mine] { hook(mine); });
}

std::string FleetAgent::read_modify_write(Job& job, std::int64_t& revision) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto current = etcd_.range(job.key);
    std::string value = current.kvs.empty() ? std::string() : current.kvs.front().value;
    std::int64_t expected = current.kvs.empty() ? 0 : current.kvs.front().mod_revision;
    if (auto written = etcd_.put_if(job.key, job.change(value), expected)) {
      revision = *written;
      return {};
    }
  }
  return "other routers kept changing it; try again";
}

void FleetAgent::carry_out(Job job) {
  std::int64_t revision = 0;
  std::string error;
  try {
    if (job.action) {
      error = job.action(etcd_, revision);
    } else if (job.change) {
      error = read_modify_write(job, revision);
    } else if (auto written = etcd_.put_if(job.key, job.value, job.expected)) {
      revision = *written;
    } else {
      auto now = etcd_.range(job.key);
      error = fmt::format(
          "it was proposed on version {}, and another change made version {} meanwhile; "
          "look at the map in force (SANTRAL SHARDMAP) and propose again",
          job.expected, now.kvs.empty() ? 0 : now.kvs.front().mod_revision);
    }
  } catch (const EtcdUnavailable& e) {
    error = fmt::format("etcd did not answer ({}); nothing changed, try again", e.what());
  }
  boost::asio::post(*home_,
                    [done = std::move(job.done), revision, error] { done(revision, error); });
}

}  // namespace santral::router
