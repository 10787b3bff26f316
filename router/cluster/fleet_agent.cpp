#include "router/cluster/fleet_agent.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "router/backend/lease_clock.h"
#include "router/cluster/move_document.h"
#include "router/cluster/put_on_version.h"

namespace santral::router {

namespace {

using Clock = std::chrono::steady_clock;

// One etcd call waits at most this long for a member: well inside the lease, so that a
// router tries every member several times before its lease can run out.
std::chrono::milliseconds call_timeout(const config::ClusterSettings& settings) {
  auto fifth = std::chrono::duration_cast<std::chrono::milliseconds>(settings.lease_ttl) / 5;
  return std::clamp(fifth, std::chrono::milliseconds(200), std::chrono::milliseconds(1000));
}

// The keeper's calls: several members may be tried, and the proof of no quorum still has to
// come in time when they all stay silent.
std::chrono::milliseconds keeper_timeout(const config::ClusterSettings& settings) {
  auto tenth = std::chrono::duration_cast<std::chrono::milliseconds>(settings.lease_ttl) / 10;
  return std::clamp(tenth, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
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
      keeper_etcd_(settings_.etcd, keeper_timeout(settings_)),
      self_(std::move(self)) {
  self_.lease_ttl_s = settings_.lease_ttl.count();
}

FleetAgent::~FleetAgent() {
  stop();
}

FleetAgent::Joined FleetAgent::join(const std::string& document) {
  auto deadline = Clock::now() + settings_.start_timeout;
  bool published = false;
  if (settings_.etcd.size() == 1)
    spdlog::warn(
        "fleet '{}': cluster.etcd names one address ({}): if that member (or the proxy behind "
        "it) is cut off, this router cannot tell etcd down from itself cut off, and stops "
        "reaching the shards; list every member",
        settings_.name, settings_.etcd.front());
  for (;;) {
    try {
      // Registered first, so that a move approved from here on waits for this router; a live
      // router of the same name makes this one refuse to start.
      if (self_.lease == 0) take_lease(false);
      register_self(true);
      try {
        members_ = etcd_.member_list();
      } catch (const EtcdUnavailable&) {
      }
      Joined joined;
      auto range = etcd_.range(settings_.prefix(), true);
      for (auto& kv : range.kvs) {
        if (kv.key == map_key_)
          joined.map = std::move(kv);
        else if (kv.key == salting_key_)
          joined.salting = std::move(kv);
        else if (kv.key == move_key_)
          joined.move = std::move(kv);
        else if (kv.key.starts_with(routers_prefix_) && kv.key != self_key_)
          ++joined.others;
      }
      if (!joined.map && !document.empty() && !published) {
        // The first router against an empty prefix publishes its file's map; when another
        // was first, the next read finds that one.
        published = etcd_.put_if(map_key_, document, 0).has_value();
        continue;
      }
      joined.published = published;
      seen_map_ = joined.map ? joined.map->mod_revision : 0;
      seen_map_published_ = seen_map_;
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
  confirmed(last_keepalive_ns_);
  thread_ = std::thread([this] { run(); });
  keeper_ = std::thread([this] { keep(); });
}

void FleetAgent::stop() {
  {
    std::lock_guard guard(lock_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  wake_keeper_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (keeper_.joinable()) keeper_.join();
  if (self_.lease != 0) {
    try {
      // Said first: the others need not wait out this router's lease, it stops serving now.
      self_.leaving = true;
      self_dirty_ = true;
      register_self(false);
      etcd_.revoke(self_.lease);  // the others see this router leave at once
    } catch (const EtcdUnavailable&) {
    }
  }
}

std::int64_t FleetAgent::lease() const {
  std::lock_guard guard(lock_);
  return self_.lease;
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
  for (const auto& departure : departures_) view.departed.push_back(departure.record);
  view.silent_ms = std::chrono::duration<double, std::milli>(Clock::now() - last_answer_).count();
  return view;
}

void FleetAgent::run() {
  bool quick = true;  // the first round at once, and right after a proposal
  std::uint64_t rounds = 0;
  for (;;) {
    std::deque<Job> jobs;
    {
      std::unique_lock guard(lock_);
      if (!quick)
        wake_.wait_for(guard, settings_.poll, [this] {
          return stopping_ || !jobs_.empty() || self_dirty_ || lease_lost_;
        });
      if (stopping_) return;
      jobs.swap(jobs_);
    }
    quick = !jobs.empty();
    for (auto& job : jobs) carry_out(std::move(job));
    try {
      if (lease_lost_.exchange(false)) {
        if (coordinating_) {
          coordinating_ = false;  // the coordinator key went with the lease
          if (hooks_.coordinating)
            boost::asio::post(*home_, [hook = hooks_.coordinating] { hook(false); });
        }
        try {
          take_lease(true);
          register_self(true);
        } catch (const RouterNameTaken& e) {
          spdlog::error("fleet '{}': {}; this router stays out of the fleet", settings_.name,
                        e.what());
          lease_lost_ = true;  // tried again next round
          continue;
        }
      }
      // This router's shard user goes everywhere before its registration says it switched.
      if (shard_fence_) shard_fence_->admit(lease_fresh());
      register_self(false);
      poll();
      fence_departed();
      if (rounds % 50 == 49 && shard_fence_) shard_fence_->recheck();
      if (++rounds % 50 == 1) {  // the cluster's membership changes rarely
        auto members = etcd_.member_list();
        std::lock_guard guard(lock_);
        members_ = std::move(members);
      }
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
      // Whether this router may serve on is the keeper's to say (keep()).
      std::lock_guard guard(lock_);
      if (view_.in_touch || view_.last_error.empty())
        spdlog::warn(
            "fleet '{}': lost etcd ({}); serving with map version {} only while the "
            "lease allows",
            settings_.name, e.what(), self_.map_version);
      view_.in_touch = false;
      view_.last_error = e.what();
    }
  }
}

// The keepalive thread: nothing else runs on it, so no proposal, read or name look-up in
// progress can hold a keepalive back.
void FleetAgent::keep() {
  bool proving = false;  // the last round proved etcd without quorum
  bool failed = false;   // the last round confirmed nothing
  for (;;) {
    {
      std::unique_lock guard(lock_);
      wake_keeper_.wait_for(guard, settings_.lease_ttl / 6, [this] { return stopping_; });
      if (stopping_) return;
    }
    std::int64_t lease = this->lease();
    if (lease == 0 || lease_lost_) continue;
    // Without quorum a keepalive can take every member's timeout to fail: after a round that
    // confirmed nothing the proof, which is quick, goes first, so that it is renewed before the
    // serving time it extends runs out.
    if (failed) {
      bool proved = prove_no_quorum();
      if (proved && !proving)
        spdlog::warn(
            "fleet '{}': etcd has no quorum (a majority of its members say they have "
            "no leader): no lease can expire, serving on",
            settings_.name);
      proving = proved;
    }
    auto asked = lease_clock_ns();
    try {
      if (keeper_etcd_.keep_alive(lease)) {
        if (proving) spdlog::info("fleet '{}': etcd has a leader again", settings_.name);
        proving = failed = false;
        last_keepalive_ns_ = asked;
        lease_safe_from_ns_ = asked;
        confirmed(asked);
        continue;
      }
      // Only the lease in force: the agent may have joined again with a new one meanwhile.
      {
        std::lock_guard guard(lock_);
        if (self_.lease != lease) continue;
        revoke_serving(fmt::format("etcd says lease {} has expired", lease));
        lease_lost_ = true;
      }
      wake_.notify_all();
    } catch (const EtcdUnavailable& e) {
      failed = true;
      if (settings_.serve_when_etcd_down && e.all_down()) {
        confirmed(asked);  // cluster.serve_when_etcd_down: the operator's bet
        continue;
      }
      if (!proving && prove_no_quorum()) {
        proving = true;
        spdlog::warn(
            "fleet '{}': etcd has no quorum (a majority of its members say they have "
            "no leader): no lease can expire, serving on",
            settings_.name);
      }
    }
  }
}

// Extends serving from now when etcd has no quorum. The lease cannot have expired before
// lease_safe_from_ns_ + TTL (the last renewal, or the last proof: a leader elected after it
// gives every lease a full TTL again), so the proof counts only if it is complete well before
// then; a proof that comes later cannot tell whether a leader expired the lease meanwhile, and
// only a keepalive tells.
bool FleetAgent::prove_no_quorum() {
  auto asked = lease_clock_ns();
  if (!quorum_lost(keeper_etcd_)) return false;
  auto ttl = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.lease_ttl).count();
  if (lease_clock_ns() > lease_safe_from_ns_ + ttl * 9 / 10) return false;
  lease_safe_from_ns_ = asked;
  confirmed(asked);
  return true;
}

// Proof that no lease can expire: more than half of the cluster's members (as etcd last
// listed them) answered, each alone, that they have no leader.
bool FleetAgent::quorum_lost(EtcdClient& etcd) {
  std::vector<std::string> members;
  {
    std::lock_guard guard(lock_);
    members = members_;
  }
  if (members.empty()) return false;
  std::size_t leaderless = 0;
  for (const auto& member : members)
    if (etcd.leaderless(member).value_or(false)) ++leaderless;
  return leaderless * 2 > members.size();
}

void FleetAgent::confirmed(std::int64_t asked_ns) {
  if (serve_until_ == nullptr || rejoining_) return;
  auto until =
      asked_ns +
      std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.lease_ttl * 2 / 3).count();
  auto previous = serve_until_->load();
  while (until > previous && !serve_until_->compare_exchange_weak(previous, until)) {
  }
}

// The lease is known gone: no request may reach a shard from now on, whatever time was left.
void FleetAgent::revoke_serving(const std::string& why) {
  if (serve_until_ != nullptr) serve_until_->store(0);
  spdlog::warn("fleet '{}': {}; this router stops reaching the shards until it has joined again",
               settings_.name, why);
}

void FleetAgent::take_lease(bool rejoining) {
  auto asked = lease_clock_ns();
  auto lease = etcd_.grant_lease(settings_.lease_ttl);
  granted_.push_back(lease);
  last_keepalive_ns_ = asked;
  lease_safe_from_ns_ = asked;
  {
    std::lock_guard guard(lock_);
    self_.lease = lease;
    self_.leaving = false;
    // A new lease, a new shard user: the old one may have been shut out meanwhile.
    if (shard_fence_) self_.fence_user = shard_fence_->new_lease(lease);
    self_dirty_ = true;
  }
  if (!rejoining) return confirmed(asked);
  spdlog::warn("fleet '{}': joining again with lease {}", settings_.name, lease);
  // Left out meanwhile: serve again only once what changed has been read and taken, after
  // the server has handled what this round's poll posts to it.
  rejoining_ = true;
  rejoined_at_ = asked;
}

// `create`: the registration must not exist yet (a live router of this name refuses this
// one). Otherwise it is updated only while it is still this lease's: gone means the lease is.
void FleetAgent::register_self(bool create) {
  RouterRecord record;
  {
    std::lock_guard guard(lock_);
    if (!create && !self_dirty_) return;
    record = self_;
    self_dirty_ = false;
  }
  auto text = record.to_json().dump();
  try {
    if (create) {
      if (etcd_.put_if(self_key_, text, 0, record.lease)) return;
      auto held = etcd_.range(self_key_);
      std::int64_t lease = held.kvs.empty() ? 0 : held.kvs.front().lease;
      if (lease == record.lease) return;
      // This process's own earlier lease (a join that raced a keepalive's news): it goes.
      if (std::find(granted_.begin(), granted_.end(), lease) != granted_.end()) {
        etcd_.revoke(lease);
        if (etcd_.put_if(self_key_, text, 0, record.lease)) return;
      }
      etcd_.revoke(record.lease);
      {
        std::lock_guard guard(lock_);
        self_.lease = 0;
      }
      throw RouterNameTaken(fmt::format(
          "router name '{}' is held by a live router of fleet '{}' (its lease {}); give this "
          "one another cluster.router, or leave it out to get a name unique to this process",
          router_name_, settings_.name, lease));
    }
    if (!etcd_.txn({{self_key_, EtcdClient::Compare::Target::Lease, record.lease, {}}},
                   {{self_key_, text, record.lease}}, {})) {
      revoke_serving("this router's registration is gone (its lease expired)");
      lease_lost_ = true;
    }
  } catch (const EtcdUnavailable&) {
    std::lock_guard guard(lock_);
    self_dirty_ = true;
    throw;
  }
}

// Registrations that went away without saying the router leaves: an expired lease. Such a
// router may still believe it serves until its own 2/3 of the lease have passed; the fleet
// waits a lease and a margin before going on without it (FleetAgent::View::departed).
void FleetAgent::note_departures(const std::vector<RouterRecord>& routers) {
  auto now = lease_clock_ns();
  auto keep_for = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.lease_ttl +
                                                                       std::chrono::seconds(1))
                      .count();
  std::lock_guard guard(lock_);
  for (const auto& seen : seen_routers_) {
    bool still = std::any_of(routers.begin(), routers.end(), [&](const RouterRecord& r) {
      return r.name == seen.name && r.lease == seen.lease;
    });
    if (!still && !seen.leaving && seen.lease != self_.lease) departures_.push_back({seen, now});
  }
  // With cluster.fence: acl a departure is waited for until its user is shut out as well.
  std::erase_if(departures_, [&](const Departure& d) {
    return now - d.at_ns > keep_for && (d.fenced || !shard_fence_);
  });
  seen_routers_ = routers;
}

// Shuts the departed routers' shard users out on every shard (cluster.fence: acl), on the
// agent's thread; one not yet done on every primary keeps its departure in View::departed.
void FleetAgent::fence_departed() {
  if (!shard_fence_) return;
  std::vector<std::string> users;
  {
    std::lock_guard guard(lock_);
    for (const auto& d : departures_)
      if (!d.fenced && !d.record.fence_user.empty()) users.push_back(d.record.fence_user);
  }
  for (const auto& user : users) {
    if (!shard_fence_->shut_out(user)) continue;
    spdlog::warn("fleet '{}': shut {} out of every shard (its router's lease expired)",
                 settings_.name, user);
    std::lock_guard guard(lock_);
    for (auto& d : departures_)
      if (d.record.fence_user == user) d.fenced = true;
  }
  std::lock_guard guard(lock_);
  for (auto& d : departures_)
    if (d.record.fence_user.empty()) d.fenced = true;  // a router without a user (fence: lease)
}

bool FleetAgent::lease_fresh() const {
  auto ttl = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.lease_ttl).count();
  return lease_clock_ns() < last_keepalive_ns_.load() + ttl * 2 / 3;
}

void FleetAgent::fence_at_shards(ShardAccount admin) {
  shard_fence_ =
      std::make_unique<ShardFence>(settings_.name, std::move(admin), call_timeout(settings_));
}

void FleetAgent::use_shards(const std::vector<config::ShardConfig>& shards) {
  if (shard_fence_) shard_fence_->use_shards(shards);
}

bool FleetAgent::admit_at_shards() {
  return !shard_fence_ || shard_fence_->admit(lease_fresh());
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
      seen_map_published_ = seen_map_;
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
  note_departures(routers);
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
    } else {
      error = put_on_version(etcd_, job.key, job.value, job.expected, revision);
    }
  } catch (const EtcdUnavailable& e) {
    error = fmt::format(
        "etcd did not answer ({}); the change may or may not have been made: look at what is "
        "in force before trying again",
        e.what());
  }
  boost::asio::post(*home_,
                    [done = std::move(job.done), revision, error] { done(revision, error); });
}

}  // namespace santral::router
