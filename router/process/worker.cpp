#include "router/process/worker.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/hotkeys/detection/hot_key_detector.h"
#include "router/hotkeys/near_cache/near_cache.h"
#include "router/hotkeys/near_cache/tracking_connections.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/runtime/fan_out.h"
#include "router/session/client.h"
#include "router/tracking/tracking_lanes.h"
#include "router/transport/handshake_log.h"

namespace santral::router {

namespace asio = boost::asio;

namespace {

// Whether two topologies put every key and channel on the same server.
bool same_placement(const placement::Topology& a, const placement::Topology& b) {
  const auto& x = *a.config;
  const auto& y = *b.config;
  if (x.hash_name != y.hash_name || x.distribution != y.distribution || x.hash_tag != y.hash_tag ||
      x.shards.size() != y.shards.size())
    return false;
  for (std::size_t i = 0; i < x.shards.size(); ++i) {
    const auto& s = x.shards[i];
    const auto& t = y.shards[i];
    if (s.address.text() != t.address.text() || s.weight != t.weight || s.ring_name != t.ring_name)
      return false;
  }
  return a.map->describe() == b.map->describe();  // namespaces and their tables
}

}  // namespace

Worker::Worker(unsigned index, placement::TopologyPtr topology, SharedState& shared,
               MigrationGate& migrations)
    : index_(index),
      topology_(std::move(topology)),
      shared_(shared),
      work_(io_.get_executor()),
      ticker_(io_),
      replica_watch_(shared.primary_readings),
      pool_(io_, stats_, shared.replica_freshness),
      hotkeys_(std::make_unique<HotKeyDetector>(topology_->config->hotkeys,
                                                std::chrono::steady_clock::now())),
      salts_(std::make_unique<SaltTable>()),
      near_cache_(std::make_unique<NearCache>(topology_->config->near_cache.max_bytes)),
      near_cache_connections_(std::make_unique<TrackingConnections>(io_, stats_, *near_cache_)),
      lanes_(std::make_unique<TrackingLanes>(io_, stats_, [this](std::uint64_t id) {
        return static_cast<TrackingClient*>(find_client(id));
      })) {
  provide({index_, &io_, &topology_, &shared_, &stats_, &scripts_, hotkeys_.get(), &sampler_,
           salts_.get(), near_cache_.get(), &learned_, &slow_log_, &write_refusals_,
           &namespace_limiters_, &migrations});
  // A move under way at start (resumed, or a fleet's) pulls nothing until this router has
  // switched to it and the move released its epoch (release_moves()).
  holding_moves_ = topology_->move != nullptr;
  refresh_salts();
  refresh_namespace_limits();
  lanes_->apply(topology_);
}

Worker::~Worker() {
  stop();
}

void Worker::start() {
  asio::post(io_, [this] {
    pool_.apply(*topology_);
    near_cache_connections_->apply(*topology_);
    follow_catalog();
    tick();
  });
  thread_ = std::thread([this] { io_.run(); });
}

void Worker::stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    ticker_.cancel();
    // Each client is held while it closes: closing drops connections whose replies were the
    // last to hold it, and it must not go away inside its own close().
    visit_clients([](Client& client) { client.close(); });
    starved_.clear();
    pool_.stop();
    near_cache_connections_->stop();
    lanes_->stop();
    work_.reset();
    io_.stop();
  });
  thread_.join();
}

void Worker::refresh_namespace_limits() {
  namespace_limiters_.clear();
  const auto& namespaces = topology_->map->namespaces();
  std::vector<TenantLimiter*> found(namespaces.size(), nullptr);
  bool any = false;
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    auto* limiter = shared_.limiters.find_namespace(namespaces[i].name());
    if (limiter != nullptr && limiter->limits().requests_per_s > 0) {
      found[i] = limiter;
      any = true;
    }
  }
  if (any) namespace_limiters_ = std::move(found);
}

void Worker::apply(placement::TopologyPtr topology) {
  bool placement_changed = !same_placement(*topology_, *topology);
  auto epoch = [](const placement::Topology& t) { return t.move ? t.move->epoch : 0; };
  bool direction_changed = epoch(*topology_) != epoch(*topology);
  topology_ = std::move(topology);
  pool_.apply(*topology_);
  follow_catalog();
  hotkeys_->configure(topology_->config->hotkeys, std::chrono::steady_clock::now());
  refresh_salts();
  refresh_namespace_limits();
  // A new map may move keys and change what is cached: start the near cache afresh.
  near_cache_->invalidate_all();
  near_cache_->set_max_bytes(topology_->config->near_cache.max_bytes);
  near_cache_connections_->apply(*topology_);
  lanes_->apply(topology_);
  if (direction_changed) change_direction();
  if (!placement_changed) return;
  // A subscription lives on the shard that owned its channel; with channels moving, the
  // client is closed so that it subscribes again where they now live.
  visit_clients([](Client& client) {
    if (!client.subscribed()) return;
    spdlog::info("client {} ({}): the shard map changed under its subscriptions; closing it",
                 client.state().id, client.state().peer);
    client.close();
  });
}

// The first worker reads what the shards know; every worker takes each snapshot it makes.
void Worker::follow_catalog() {
  if (index_ != 0) return;
  shared_.catalog.follow(
      pool_, *topology_,
      [peers = peers_](const std::shared_ptr<const protocol::LearnedCommands>& learned) {
        for (Worker* peer : peers)
          asio::post(peer->io(), [peer, learned] { peer->set_learned(learned); });
      });
}

// A move starts, ends or turns back: what was routed the old way must not meet what is routed
// the new way. Pulls wait for release_moves(); held pulls of the old direction end as if
// nothing moved (their requests are pulled again the new way); transactions that hold a
// shard's connection are ended with a retryable error, and so are blocked calls on keys that
// move (router/routes/blocked_calls.h).
void Worker::change_direction() {
  ++direction_;
  holding_moves_ = topology_->move != nullptr;
  for (auto& held : std::exchange(held_pulls_, {}))
    for (std::uint32_t i = 0; i < held.groups.size(); ++i)
      held.client->deliver(held.slot, i, "+NOKEY\r\n");
  visit_clients([this](Client& client) { client.map_changed(*topology_); });
}

void Worker::hold_pull(RequestContext& client, std::uint64_t slot, std::vector<PullGroup> groups) {
  held_pulls_.push_back({&client, slot, std::move(groups), std::chrono::steady_clock::now()});
}

// resharding.hold_timeout_ms: a pull held that long (a router of the fleet does not switch:
// frozen, cut off, its server thread stuck) is answered TRYAGAIN rather than waiting for ever.
void Worker::expire_held_pulls(std::chrono::steady_clock::time_point now) {
  auto timeout = config().resharding.hold_timeout;
  if (held_pulls_.empty() || now - held_pulls_.front().since < timeout) return;
  std::string reply;
  protocol::RespWriter(reply).error(
      protocol::error_message(protocol::ClientError::MoveSwitchTooSlow, timeout.count()));
  std::vector<HeldPull> expired;
  std::erase_if(held_pulls_, [&](HeldPull& held) {
    if (now - held.since < timeout) return false;
    expired.push_back(std::move(held));
    return true;
  });
  for (auto& held : expired)
    for (std::uint32_t i = 0; i < held.groups.size(); ++i)
      held.client->deliver(held.slot, i, reply);
}

void Worker::after_moves_released(std::function<void()> then) {
  if (!holding_moves_) return then();
  after_release_.push_back(std::move(then));
}

void Worker::release_moves() {
  holding_moves_ = false;
  for (auto& held : std::exchange(held_pulls_, {})) send_pull(*held.client, held.slot, held.groups);
  for (auto& then : std::exchange(after_release_, {})) then();
}

void Worker::adopt(asio::ip::tcp::socket socket, std::uint64_t client_id, bool tls) {
  ++stats_.connections_accepted;
  auto client = boost::intrusive_ptr<Client>(new Client(*this, std::move(socket), client_id, tls));
  clients_.emplace(client_id, client.get());
  shared_.clients.add(client_id, index_);
  auto now = std::chrono::steady_clock::now();
  if (tls) handshake_deadlines_.push_back({now + config().tls.handshake_timeout, client_id});
  if (!client->state().authenticated && config().limits.auth_timeout.count() > 0)
    auth_deadlines_.push_back({now + config().limits.auth_timeout, client_id});
  client->session().start();
  if (drained_) client->session().stop_after_input();
}

void Worker::drain(std::function<void()> drained) {
  drained_ = std::move(drained);
  visit_clients([](Client& client) { client.session().stop_after_input(); });
  // An idle client closes at once, and the last one to go has already passed `drained` on.
  if (drained_ && clients_.empty()) std::exchange(drained_, nullptr)();
}

void Worker::forget(RequestContext& client) {
  if (client.state().monitoring) shared_.monitors.remove(client.state().id);
  if (clients_.erase(client.state().id) > 0) {
    shared_.connected_clients.fetch_sub(1);
    shared_.clients.remove(client.state().id);
  }
  lanes_->forget_client(client.state().id);
  if (drained_ && clients_.empty()) asio::post(io_, std::exchange(drained_, nullptr));
}

Client* Worker::find_client(std::uint64_t id) const {
  auto found = clients_.find(id);
  return found == clients_.end() ? nullptr : found->second;
}

void Worker::push_to(std::uint64_t id, const std::string& frame) {
  if (Client* client = find_client(id); client && !client->closed()) client->push(frame);
}

void Worker::redirect_invalidation(std::uint64_t from, std::uint64_t to, unsigned to_worker,
                                   std::string keys) {
  Worker* target = to_worker < peers_.size() ? peers_[to_worker] : this;
  auto deliver = [this, target, from, to, keys = std::move(keys)] {
    if (Client* client = target->find_client(to); client && !client->closed())
      return client->redirected_invalidation(keys);
    auto gone = [this, from, to] {
      if (Client* client = find_client(from)) client->redirect_gone(to);
    };
    if (target == this) return gone();
    asio::post(io_, gone);
  };
  if (target == this) return deliver();
  asio::post(target->io(), std::move(deliver));
}

void Worker::visit_clients(const std::function<void(Client&)>& visit) {
  std::vector<boost::intrusive_ptr<Client>> all;
  all.reserve(clients_.size());
  for (auto& [id, client] : clients_) all.emplace_back(client);
  for (auto& client : all) visit(*client);
}

void Worker::for_each_client(const std::function<void(RequestContext&)>& visit) {
  visit_clients(visit);
}

void Worker::set_peers(std::vector<Worker*> peers) {
  peers_ = std::move(peers);
  peer_services_.assign(peers_.begin(), peers_.end());
}

void Worker::remember_script(std::string_view body) {
  if (scripts_.knows(ScriptCache::sha1_hex(body))) return;
  std::string sha = scripts_.remember(body);
  std::vector<Worker*> others;
  for (Worker* peer : peers_)
    if (peer != this) others.push_back(peer);
  post_to_each<Worker>(others, [sha, text = std::string(body)](Worker& peer) {
    peer.scripts().remember(sha, text);
  });
}

void Worker::forget_scripts() {
  scripts_.clear();
  std::vector<Worker*> others;
  for (Worker* peer : peers_)
    if (peer != this) others.push_back(peer);
  post_to_each<Worker>(others, [](Worker& peer) { peer.scripts().clear(); });
}

void Worker::refresh_salts() {
  std::shared_ptr<const SaltOverrides> overrides;
  {
    std::lock_guard lock(shared_.salt_lock);
    overrides = shared_.salt_overrides;
  }
  salts_->rebuild(topology_->config, topology_->map, topology_->salt_naming, std::move(overrides));
}

void Worker::publish() {
  std::uint64_t commands = 0, command_errors = 0;
  for (const auto& [spec, command] : stats_.commands) {
    commands += command.calls;
    command_errors += command.errors;
  }
  std::uint64_t requests = 0, errors = 0, timeouts = 0;
  for (const auto& [name, shard] : stats_.shards) {
    requests += shard.requests;
    errors += shard.errors;
    timeouts += shard.timeouts;
  }
  auto relaxed = std::memory_order_relaxed;
  published_.commands.store(commands, relaxed);
  published_.command_errors.store(command_errors, relaxed);
  published_.shard_requests.store(requests, relaxed);
  published_.shard_errors.store(errors, relaxed);
  published_.shard_timeouts.store(timeouts, relaxed);
  published_.client_bytes_in.store(stats_.client_bytes_in, relaxed);
  published_.requests_parsed.store(stats_.requests_parsed, relaxed);
  published_.client_bytes_out.store(stats_.client_bytes_out, relaxed);
  const auto& cache = near_cache_->counters();
  published_.near_cache_hits.store(cache.hits, relaxed);
  published_.near_cache_misses.store(cache.misses, relaxed);
  published_.near_cache_evictions.store(cache.evictions, relaxed);
  published_.near_cache_invalidations.store(cache.invalidations, relaxed);
  published_.near_cache_bytes.store(cache.bytes, relaxed);
  published_.near_cache_keys.store(cache.keys, relaxed);
}

// The near cache admits the keys this worker's detector sees read at least
// near_cache.min_reads_per_sec; a key that cools down is no longer filled (what is cached
// stays until evicted or invalidated).
void Worker::admit_hot_reads(std::chrono::steady_clock::time_point now) {
  if (!shard_map().near_cache_anywhere()) return;
  double threshold = config().near_cache.min_reads_per_sec;
  std::vector<std::string> hot;
  for (auto& rate : hotkeys_->rates(now))
    if (rate.reads >= threshold) hot.push_back(std::move(rate.key));
  near_cache_->admit(std::move(hot));
}

// Once a second, connections that read nothing since the last sweep give back their buffers.
void Worker::park_idle_sessions(std::chrono::steady_clock::time_point now) {
  if (now - last_park_sweep_ < std::chrono::seconds(1)) return;
  last_park_sweep_ = now;
  for (auto& [id, client] : clients_) client->session().park_if_idle();
}

// limits.idle_timeout_s (Redis's `timeout`): checked with the parking sweep, once a second.
void Worker::close_idle_sessions(std::chrono::steady_clock::time_point now) {
  auto timeout = config().limits.idle_timeout;
  if (timeout.count() == 0 || now != last_park_sweep_) return;
  std::vector<boost::intrusive_ptr<Client>> idle;
  for (auto& [id, client] : clients_)
    if (client->idle_since(now - timeout)) idle.emplace_back(client);
  for (auto& client : idle) {
    spdlog::debug("client {} ({}): idle for limits.idle_timeout_s; closing it", client->state().id,
                  client->state().peer);
    client->close();
  }
}

// A TLS handshake or an AUTH that did not come in time closes the connection: a client may
// not hold a connection slot without speaking.
void Worker::check_session_deadlines(std::chrono::steady_clock::time_point now) {
  while (!handshake_deadlines_.empty() && handshake_deadlines_.front().at <= now) {
    auto* client = find_client(handshake_deadlines_.front().client);
    handshake_deadlines_.pop_front();
    if (client != nullptr && client->session().handshaking()) {
      handshake_failed(client->state().peer, "no handshake within tls.handshake_timeout_ms");
      client->close();
    }
  }
  while (!auth_deadlines_.empty() && auth_deadlines_.front().at <= now) {
    auto* client = find_client(auth_deadlines_.front().client);
    auth_deadlines_.pop_front();
    if (client != nullptr) client->auth_timed_out();
  }
}

// limits.max_input_bytes_total, split evenly between the workers (0: no bound).
std::size_t Worker::input_share() const {
  auto total = config().limits.max_input_bytes_total;
  return total == 0 ? 0 : std::max<std::size_t>(total / peers_.size(), 1);
}

void Worker::input_changed(std::size_t before, std::size_t after) {
  buffered_input_ += after;
  buffered_input_ -= before;
  if (after <= before) return;
  auto share = input_share();
  if (share != 0 && buffered_input_ > share) stop_largest_reader();
}

void Worker::stop_largest_reader() {
  Client* largest = nullptr;
  for (auto& [id, client] : clients_)
    if (!client->session().reading_stopped() &&
        (largest == nullptr ||
         client->session().buffered_input() > largest->session().buffered_input()))
      largest = client;
  if (largest == nullptr || largest->session().buffered_input() == 0) return;
  spdlog::debug(
      "client {} ({}) holds {} bytes of unfinished input; not reading from it while "
      "the clients' input is over limits.max_input_bytes_total",
      largest->state().id, largest->state().peer, largest->session().buffered_input());
  largest->session().stop_reading();
  starved_.emplace_back(largest);  // with no read in flight, only this keeps it alive
}

// Once the sum is back under three quarters of the share, the longest-waiting client is read
// again (one per tick, so that they do not all come back at once).
void Worker::resume_starved_reader() {
  while (!starved_.empty() && buffered_input_ < input_share() / 4 * 3) {
    auto client = std::move(starved_.front());
    starved_.pop_front();
    if (client->closed()) continue;
    client->session().resume_reading();
    return;
  }
}

// Deadlines are checked on a coarse clock: one timer per worker instead of one per request.
void Worker::tick() {
  auto now = std::chrono::steady_clock::now();
  pool_.check_deadlines(now);
  if (index_ == 0) replica_watch_.tick(pool_, *topology_, now);
  expire_held_pulls(now);
  near_cache_connections_->check_deadlines(now);
  lanes_->check_deadlines(now);
  hotkeys_->rotate(now);
  admit_hot_reads(now);
  park_idle_sessions(now);
  close_idle_sessions(now);
  check_session_deadlines(now);
  resume_starved_reader();
  publish();
  auto period = std::clamp(config().timeouts.request / 10, std::chrono::milliseconds(5),
                           std::chrono::milliseconds(100));
  ticker_.expires_after(period);
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

}  // namespace santral::router
