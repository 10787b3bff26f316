#include "router/resharding/mover.h"

#include <algorithm>
#include <charconv>

#include <spdlog/spdlog.h>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "router/backend/draining_connections.h"
#include "router/resharding/key_conflict.h"
#include "router/resharding/migrate.h"
#include "router/resharding/receiving_mark.h"
#include "router/resharding/shard_calls.h"

namespace santral::router {

namespace {

constexpr auto kRetryAfter = std::chrono::seconds(1);
// After a MIGRATE refused for another router's receiving mark: long enough for its MIGRATE.
constexpr auto kRefusedPause = std::chrono::milliseconds(20);
constexpr auto kDeadlineCheck = std::chrono::milliseconds(200);

// INFO keyspace: "db0:keys=12,expires=0,avg_ttl=0" -> 0, for each database holding keys.
std::vector<int> databases_with_keys(std::string_view reply) {
  std::vector<int> out;
  protocol::ReplyValue value;
  if (!protocol::parse_reply(reply, value) || value.is_error()) return out;
  // Every line "db<N>:...", the first one included.
  std::string text = "\n" + std::string(value.text);
  std::size_t at = 0;
  while ((at = text.find("\ndb", at)) != std::string::npos) {
    at += 3;
    int db = 0;
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), db);
    if (ec == std::errc() && end < text.data() + text.size() && *end == ':') out.push_back(db);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

struct Mover::Source {
  Source(boost::asio::io_context& io, std::size_t index) : shard(index), timer(io) {}
  std::size_t shard;
  ShardStats stats;
  std::vector<int> databases;
  std::size_t db = 0;  // into databases
  BackendConnectionPtr connection;
  std::string cursor = "0";
  // The next SCAN page, asked behind the last batch's MIGRATEs (same round trip); empty when
  // none was asked or it failed.
  std::string next_page;
  std::uint64_t moved_this_pass = 0;
  bool failed_this_pass = false;
  bool refused_this_pass = false;  // a MIGRATE met another router's receiving mark
  bool listed = false;             // databases known
  bool done = false;
  boost::asio::steady_timer timer;
};

Mover::Mover(boost::asio::io_context& io, placement::TopologyPtr topology, MigrationGate& gate,
             std::function<void()> done)
    : io_(io),
      topology_(std::move(topology)),
      gate_(gate),
      done_(std::move(done)),
      deadlines_(io),
      marked_(topology_->config->cluster.enabled()),
      alive_(std::make_shared<bool>(true)) {
  // A MIGRATE of a big key may take as long as its own timeout allows: the walk's connections
  // wait that long before they give up on a shard (clients' connections keep theirs).
  auto config = std::make_shared<config::Config>(*topology_->config);
  config->timeouts.request = migrate_answer_timeout(*topology_->config);
  walk_config_ = std::move(config);
  // Every shard the old map placed keys on may hold keys that move.
  std::vector<std::size_t> shards = topology_->move->from_shard;
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  for (std::size_t shard : shards) sources_.push_back(std::make_unique<Source>(io_, shard));
}

Mover::~Mover() {
  stop();
}

void Mover::start() {
  check_deadlines();
  for (auto& source : sources_) begin(*source);
}

void Mover::stop() {
  if (!stopped_) {
    stopped_ = true;
    *alive_ = false;
    deadlines_.cancel();
    for (auto& source : sources_) source->timer.cancel();
  }
  for (auto& source : sources_)
    if (source->connection) source->connection->stop();
  for (auto& [shard, connection] : mark_connections_) connection->stop();
  for (auto& [place, connection] : target_connections_) connection->stop();
}

// No new batch starts; the batch whose MIGRATEs are out is waited for (its connection stays
// open, or the MIGRATE would run on with nobody to wait for it; given up on, until its source
// proves it done or dead), then the walk's connections close, and once whatever they gave up
// on is proven too (a SCAN or INFO on a stalled source), `stopped` runs.
void Mover::stop(std::function<void()> stopped) {
  if (!stopped_) {
    stopped_ = true;
    *alive_ = false;
    deadlines_.cancel();
    for (auto& source : sources_) source->timer.cancel();
  }
  auto closed = [this, stopped = std::move(stopped)]() mutable {
    stop();
    DrainingConnections::of(io_).after_all(std::move(stopped));
  };
  if (batches_->in_flight == 0) return closed();
  batches_->drained = std::move(closed);
}

bool Mover::source_done(std::size_t shard) const {
  for (const auto& source : sources_)
    if (source->shard == shard) return source->done;
  return true;
}

void Mover::check_deadlines() {
  auto now = std::chrono::steady_clock::now();
  for (auto& source : sources_)
    if (source->connection) source->connection->check_deadlines(now);
  for (auto& [shard, connection] : mark_connections_) connection->check_deadlines(now);
  for (auto& [place, connection] : target_connections_) connection->check_deadlines(now);
  deadlines_.expires_after(kDeadlineCheck);
  deadlines_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
    if (!ec && !alive.expired() && *alive.lock()) check_deadlines();
  });
}

// Connects to the source in the database being walked (the first: the config's, to ask INFO
// keyspace which databases hold keys).
void Mover::begin(Source& source) {
  if (stopped_) return;
  const auto& shard = topology_->map->shard(source.shard);
  int database = source.listed ? source.databases[source.db] : topology_->config->backend.database;
  if (source.connection) source.connection->stop();
  source.connection = BackendConnection::open(
      io_, BackendTarget{source.shard, shard.name, shard.address, {database, 2}}, walk_config_,
      source.stats);
  if (source.listed) return scan(source);
  std::weak_ptr<bool> alive = alive_;
  call_shard(*source.connection, {command_bytes({"INFO", "keyspace"})},
             [this, alive, &source](std::vector<std::string> replies) {
               if (alive.expired() || !*alive.lock()) return;
               if (protocol::is_error_frame(replies[0]))
                 return failed(source, protocol::line_text(replies[0]));
               source.databases = databases_with_keys(replies[0]);
               source.listed = true;
               if (source.databases.empty()) {
                 source.done = true;
                 return pass_done(source);
               }
               begin(source);
             });
}

std::string Mover::scan_request(const Source& source) const {
  return command_bytes(
      {"SCAN", source.cursor, "COUNT", std::to_string(topology_->config->resharding.batch_keys)});
}

void Mover::scan(Source& source) {
  if (stopped_) return;
  if (auto page = std::exchange(source.next_page, {});
      !page.empty() && !protocol::is_error_frame(page))
    return scanned(source, page);
  std::weak_ptr<bool> alive = alive_;
  call_shard(*source.connection, {scan_request(source)},
             [this, alive, &source](std::vector<std::string> replies) {
               if (alive.expired() || !*alive.lock()) return;
               scanned(source, replies[0]);
             });
}

void Mover::scanned(Source& source, const std::string& reply) {
  protocol::ReplyValue page;
  if (!protocol::parse_reply(reply, page) || page.is_error() || page.elements.size() != 2)
    return failed(source, "SCAN: " + protocol::line_text(reply));
  std::string next(page.elements[0].text);
  const auto& move = *topology_->move;
  const auto& map = *topology_->map;
  // The keys to move, by target.
  std::vector<std::size_t> targets;
  std::vector<std::vector<std::string_view>> groups;
  for (const auto& element : page.elements[1].elements) {
    std::string_view key = element.text;
    if (key == kReceivingMarkKey) continue;  // the walk's own gate, not data
    std::size_t owner = map.shard_for_key(key);
    if (owner == source.shard || move.source_of(key, owner) != source.shard) continue;
    auto at = std::find(targets.begin(), targets.end(), owner);
    if (at == targets.end()) {
      targets.push_back(owner);
      groups.emplace_back();
      at = targets.end() - 1;
    }
    groups[at - targets.begin()].push_back(key);
  }
  source.cursor = next;
  if (groups.empty()) {
    if (next == "0") return pass_done(source);
    return scan(source);
  }
  // MEMORY USAGE of each key first (what the throttle and the figures count), then one
  // MIGRATE per target: one round trip for the batch.
  std::vector<std::string> requests;
  std::size_t keys = 0;
  for (const auto& group : groups)
    for (auto key : group) {
      requests.push_back(command_bytes({"MEMORY", "USAGE", key}));
      ++keys;
    }
  int database = source.databases[source.db];
  for (std::size_t g = 0; g < groups.size(); ++g)
    requests.push_back(marked_ ? migrate_unless_receiving(*topology_->config,
                                                          map.shard(targets[g]).address, database,
                                                          groups[g])
                               : migrate_command(*topology_->config, map.shard(targets[g]).address,
                                                 database, groups[g]));
  // The next page behind the MIGRATEs: it runs once they have (a shard runs one command at a
  // time), and saves the walk a round trip per batch.
  bool scan_ahead = next != "0";
  if (scan_ahead) requests.push_back(scan_request(source));
  auto batch = std::make_shared<Batch>();
  batch->source = &source;
  batch->database = database;
  for (const auto& group : groups)
    batch->group_keys.insert(batch->group_keys.end(), group.begin(), group.end());
  batch->targets = std::move(targets);
  batch->requests = std::move(requests);
  batch->keys = keys;
  batch->scan_ahead = scan_ahead;
  for (const auto& group : groups) batch->sizes.push_back(group.size());
  batch->claim.sources = {map.shard(source.shard).address.text()};
  for (std::size_t target : batch->targets)
    batch->claim.targets.push_back(map.shard(target).address.text());
  gate_.enter(io_, batch->claim, [this, alive = std::weak_ptr<bool>(alive_), gate = &gate_, batch] {
    if (alive.expired() || !*alive.lock()) return gate->leave(batch->claim);
    ++batches_->in_flight;
    if (marked_) return mark(batch);
    send(batch);
  });
}

// In a fleet: every target of the batch marked as receiving (receiving_mark.h) before its
// MIGRATEs go out; a target that cannot be marked fails the batch with its answer. Replies
// may come after the walk stopped: they touch the mover only while it is alive.
void Mover::mark(const std::shared_ptr<Batch>& batch) {
  batch->holder = receiving_mark_holder();
  auto left = std::make_shared<std::size_t>(batch->targets.size());
  auto failure = std::make_shared<std::string>();
  auto request = mark_receiving(batch->holder, topology_->config->resharding.migrate_timeout, 0);
  auto done = finisher(batch);
  for (std::size_t target : batch->targets)
    call_shard(*mark_connection(target), {request},
               [this, alive = std::weak_ptr<bool>(alive_), done, batch, left,
                failure](std::vector<std::string> replies) {
                 if (!replies[0].starts_with(":") && failure->empty()) *failure = replies[0];
                 if (--*left > 0) return;
                 bool live = !alive.expired() && *alive.lock();
                 if (live && failure->empty()) return send(batch);
                 if (live) unmark(*batch);
                 done(std::vector<std::string>(batch->requests.size(),
                                               failure->empty() ? "-ERR stopped" : *failure));
               });
}

void Mover::send(const std::shared_ptr<Batch>& batch) {
  call_shard(*batch->source->connection, batch->requests,
             [this, alive = std::weak_ptr<bool>(alive_), done = finisher(batch),
              batch](const std::vector<std::string>& replies) {
               if (!alive.expired() && *alive.lock() && marked_) unmark(*batch);
               done(replies);
             });
}

void Mover::unmark(const Batch& batch) {
  for (std::size_t target : batch.targets)
    call_shard(*mark_connection(target), {unmark_receiving(batch.holder, 0)},
               [](const std::vector<std::string>&) {});
}

// What ends a batch once its replies are in: it leaves the gate, a stop waiting for it goes
// on, and a walk still alive counts what moved. A batch Santral gave up on (an error where a
// reply should be) ends only once its source proves its MIGRATEs done or dead
// (draining_connections.h): a MIGRATE running late must not meet one of the other direction.
// Keys a target already held (BUSYKEY) are settled first (key_conflict.h).
std::function<void(const std::vector<std::string>&)> Mover::finisher(
    const std::shared_ptr<Batch>& batch) {
  auto end = [this, alive = std::weak_ptr<bool>(alive_), gate = &gate_, batches = batches_,
              batch](const std::vector<std::string>& replies) {
    gate->leave(batch->claim);
    if (--batches->in_flight == 0 && batches->drained)
      return std::exchange(batches->drained, nullptr)();
    if (alive.expired() || !*alive.lock()) return;
    if (batch->scan_ahead) batch->source->next_page = replies.back();
    moved(*batch->source, replies, batch->sizes, batch->keys, batch->reported);
  };
  return [this, alive = std::weak_ptr<bool>(alive_), batch,
          end = std::move(end)](const std::vector<std::string>& replies) {
    bool given_up = std::any_of(replies.begin(), replies.end(), [](const std::string& reply) {
      return protocol::is_error_frame(reply);
    });
    auto settled = [this, alive, batch, end, replies] {
      if (alive.expired() || !*alive.lock()) return end(replies);
      settle_conflicts(batch, replies, [end, replies] { end(replies); });
    };
    if (!given_up) return settled();
    // Reported at once (STATUS, the log); the batch ends once its source has answered for it.
    if (!alive.expired() && *alive.lock()) {
      batch->reported = true;
      for (std::size_t g = 0; g < batch->sizes.size(); ++g)
        if (const auto& result = replies[batch->keys + g];
            protocol::is_error_frame(result) && !refused_as_receiving(result) && !busy_key(result))
          report(*batch->source, "MIGRATE", result);
    }
    DrainingConnections::of(io_).after(topology_->map->shard(batch->source->shard).address.text(),
                                       std::move(settled));
  };
}

// The batch's groups answered BUSYKEY, each settled (key_conflict.h) before the batch ends; the
// next pass moves what is left.
void Mover::settle_conflicts(const std::shared_ptr<Batch>& batch,
                             const std::vector<std::string>& replies, std::function<void()> then) {
  std::vector<std::size_t> busy;
  for (std::size_t g = 0; g < batch->sizes.size(); ++g)
    if (busy_key(replies[batch->keys + g])) busy.push_back(g);
  if (busy.empty()) return then();
  auto left = std::make_shared<std::size_t>(busy.size());
  auto done = [left, then = std::move(then)](const std::string& error) {
    if (!error.empty()) spdlog::warn("resharding: {}; trying again on the next pass", error);
    if (--*left == 0) then();
  };
  for (std::size_t g : busy) {
    std::size_t first = 0;
    for (std::size_t before = 0; before < g; ++before) first += batch->sizes[before];
    std::vector<std::string> keys(
        batch->group_keys.begin() + static_cast<std::ptrdiff_t>(first),
        batch->group_keys.begin() + static_cast<std::ptrdiff_t>(first + batch->sizes[g]));
    settle_busy_keys(*batch->source->connection,
                     *target_connection(batch->targets[g], batch->database), std::move(keys), done);
  }
}

// A connection to `shard` in `database`, where the walk compares copies (key_conflict.h).
BackendConnection* Mover::target_connection(std::size_t shard, int database) {
  auto& connection = target_connections_[{shard, database}];
  if (!connection) {
    const auto& entry = topology_->map->shard(shard);
    connection =
        BackendConnection::open(io_, BackendTarget{shard, entry.name, entry.address, {database, 2}},
                                walk_config_, mark_stats_);
  }
  return connection.get();
}

// The connection receiving marks go down to `shard` (database 0, where they live).
BackendConnection* Mover::mark_connection(std::size_t shard) {
  auto& connection = mark_connections_[shard];
  if (!connection) {
    const auto& entry = topology_->map->shard(shard);
    connection = BackendConnection::open(
        io_, BackendTarget{shard, entry.name, entry.address, {0, 2}}, walk_config_, mark_stats_);
  }
  return connection.get();
}

// A MIGRATE that failed: counted, and said in STATUS's last_error and the log.
void Mover::report(const Source& source, std::string_view what, const std::string& reply) {
  ++progress_.errors;
  progress_.last_error =
      fmt::format("{} from shard '{}': {}", what, topology_->map->shard(source.shard).name,
                  protocol::line_text(reply));
  spdlog::warn("resharding: {}; retrying on the next pass", progress_.last_error);
}

void Mover::moved(Source& source, const std::vector<std::string>& replies,
                  const std::vector<std::size_t>& sizes, std::size_t keys, bool reported) {
  std::uint64_t batch_keys = 0, batch_bytes = 0;
  bool failed = false, refused = false;  // this batch's
  std::size_t first = 0;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    const std::string& result = replies[keys + g];
    std::uint64_t bytes = 0;
    for (std::size_t k = first; k < first + sizes[g]; ++k) {
      protocol::ReplyValue size;
      if (protocol::parse_reply(replies[k], size) &&
          size.type == protocol::ReplyValue::Type::Integer) {
        auto b = static_cast<std::uint64_t>(std::max<std::int64_t>(size.integer, 0));
        bytes += b;
        progress_.largest_key_bytes = std::max(progress_.largest_key_bytes, b);
      }
    }
    first += sizes[g];
    if (migrated(result)) {
      if (result.starts_with("+OK")) {
        batch_keys += sizes[g];
        batch_bytes += bytes;
      }
    } else if (refused_as_receiving(result) || busy_key(result)) {
      // Not an error (a MIGRATE of another router in the way, or copies settled already,
      // key_conflict.h): the next pass sends these again.
      refused = true;
    } else {
      failed = true;
      if (!reported) report(source, "MIGRATE", result);
    }
  }
  progress_.keys_moved += batch_keys;
  progress_.bytes_moved += batch_bytes;
  source.moved_this_pass += batch_keys;
  source.failed_this_pass = source.failed_this_pass || failed;
  source.refused_this_pass = source.refused_this_pass || refused;
  // A pause after a batch that failed (no hot loop against a shard that is down), not after
  // every batch of the pass: the pages after it go at the walk's pace.
  auto pause = throttle(batch_keys, batch_bytes);
  if (failed && pause < kRetryAfter) pause = kRetryAfter;
  if (refused && pause < kRefusedPause) pause = kRefusedPause;
  if (source.cursor == "0") {
    if (pause.count() == 0) return pass_done(source);
    source.timer.expires_after(pause);
    std::weak_ptr<bool> alive = alive_;
    return source.timer.async_wait([this, alive, &source](boost::system::error_code ec) {
      if (!ec && !alive.expired() && *alive.lock()) pass_done(source);
    });
  }
  if (pause.count() == 0) return scan(source);
  later(source, pause);
}

// One budget for the whole move, whatever the number of sources: each batch books its cost
// on a shared clock, and its source waits until the clock has caught up.
std::chrono::steady_clock::duration Mover::throttle(std::uint64_t keys, std::uint64_t bytes) {
  const auto& settings = topology_->config->resharding;
  double seconds = 0;
  if (settings.max_keys_per_sec > 0)
    seconds = std::max(seconds, double(keys) / double(settings.max_keys_per_sec));
  if (settings.max_bytes_per_sec > 0)
    seconds = std::max(seconds, double(bytes) / double(settings.max_bytes_per_sec));
  if (seconds == 0) return {};
  auto now = std::chrono::steady_clock::now();
  budget_ =
      std::max(budget_, now) + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(seconds));
  return budget_ - now;
}

void Mover::failed(Source& source, const std::string& what) {
  ++progress_.errors;
  progress_.last_error =
      fmt::format("shard '{}': {}", topology_->map->shard(source.shard).name, what);
  spdlog::warn("resharding paused on {}; retrying in 1 s", progress_.last_error);
  source.timer.expires_after(kRetryAfter);
  std::weak_ptr<bool> alive = alive_;
  source.timer.async_wait([this, alive, &source](boost::system::error_code ec) {
    if (ec || alive.expired() || !*alive.lock()) return;
    if (!source.listed) return begin(source);
    scan(source);
  });
}

void Mover::later(Source& source, std::chrono::steady_clock::duration after) {
  source.timer.expires_after(after);
  std::weak_ptr<bool> alive = alive_;
  source.timer.async_wait([this, alive, &source](boost::system::error_code ec) {
    if (!ec && !alive.expired() && *alive.lock()) scan(source);
  });
}

// A whole SCAN pass of one database is over: another if it moved or failed anything (what
// was moved may have been written back meanwhile only by a request routed the old way, which
// the fence rules out, but a failed MIGRATE left keys behind); else the next database.
void Mover::pass_done(Source& source) {
  if (!source.done) {
    bool again = source.moved_this_pass > 0 || source.failed_this_pass || source.refused_this_pass;
    source.moved_this_pass = 0;
    source.failed_this_pass = false;
    source.refused_this_pass = false;
    source.cursor = "0";
    source.next_page.clear();
    if (again) return scan(source);
    if (++source.db < source.databases.size()) return begin(source);
    source.done = true;
    spdlog::info("resharding: nothing left to move on shard '{}'",
                 topology_->map->shard(source.shard).name);
  }
  if (std::all_of(sources_.begin(), sources_.end(), [](const auto& s) { return s->done; })) {
    auto done = std::move(done_);
    done_ = nullptr;
    if (done) done();
  }
}

}  // namespace santral::router
