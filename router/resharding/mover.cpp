#include "router/resharding/mover.h"

#include <algorithm>
#include <charconv>
#include <deque>

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
// What a SCAN page costs its shard, in keys moved: a tenth of a key per key it returns (Redis
// 7.0's INFO commandstats on a source of 200,000 keys of 100 bytes: 59 us per SCAN COUNT 100,
// 684 us per MIGRATE of 100 keys). The throttle counts the pages with nothing to move.
constexpr std::uint64_t kScannedKeysPerKeyMoved = 10;
// A throttled walk's MIGRATE carries at most a second's budget divided by this (a
// millisecond's): at max_keys_per_sec 20000, 20 keys.
constexpr std::uint64_t kSlicesPerSecond = 1000;

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
  std::string cursor = "0";  // of the page being moved (the next one's once it is sized)
  // The next SCAN page, asked with the last page's MEMORY USAGEs (same round trip); empty when
  // none was asked or it failed.
  std::string next_page;
  std::deque<Chunk> chunks;  // of the page being moved, not sent yet
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

std::string Mover::scan_request(std::string_view cursor) const {
  return command_bytes(
      {"SCAN", cursor, "COUNT", std::to_string(topology_->config->resharding.batch_keys)});
}

void Mover::scan(Source& source) {
  if (stopped_) return;
  if (auto page = std::exchange(source.next_page, {});
      !page.empty() && !protocol::is_error_frame(page))
    return scanned(source, page);
  std::weak_ptr<bool> alive = alive_;
  call_shard(*source.connection, {scan_request(source.cursor)},
             [this, alive, &source](std::vector<std::string> replies) {
               if (alive.expired() || !*alive.lock()) return;
               scanned(source, replies[0]);
             });
}

// One SCAN page: the keys to move, by target, are sized (MEMORY USAGE each) with the next page
// asked in the same round trip; a page with nothing to move goes on to the next one.
void Mover::scanned(Source& source, const std::string& reply) {
  protocol::ReplyValue page;
  if (!protocol::parse_reply(reply, page) || page.is_error() || page.elements.size() != 2)
    return failed(source, "SCAN: " + protocol::line_text(reply));
  std::string next(page.elements[0].text);
  const auto& move = *topology_->move;
  const auto& map = *topology_->map;
  std::vector<std::size_t> targets;
  std::vector<std::vector<std::string>> groups;
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
    groups[at - targets.begin()].emplace_back(key);
  }
  if (groups.empty()) {
    // Nothing to move: the page's own cost is booked, so that a pass with nothing to move
    // does not SCAN its source at full speed.
    source.cursor = next;
    auto scanned_keys = static_cast<std::uint64_t>(page.elements[1].elements.size());
    auto pause =
        throttle((scanned_keys + kScannedKeysPerKeyMoved - 1) / kScannedKeysPerKeyMoved, 0);
    if (pause.count() > 0) return later(source, pause, &Mover::advance);
    return advance(source);
  }
  std::vector<std::string> requests;  // sizes in the order sized() reads them: target by target
  for (const auto& group : groups)
    for (const auto& key : group) requests.push_back(command_bytes({"MEMORY", "USAGE", key}));
  if (next != "0") requests.push_back(scan_request(next));
  std::weak_ptr<bool> alive = alive_;
  call_shard(*source.connection, requests,
             [this, alive, &source, targets = std::move(targets), groups = std::move(groups),
              next](const std::vector<std::string>& replies) mutable {
               if (alive.expired() || !*alive.lock()) return;
               sized(source, std::move(targets), std::move(groups), next, replies);
             });
}

// The page's keys cut into chunks (chunk_bounds) by their sizes, target after target, in the
// order SCAN gave them; then the first chunk goes.
void Mover::sized(Source& source, std::vector<std::size_t> targets,
                  std::vector<std::vector<std::string>> groups, const std::string& next,
                  const std::vector<std::string>& replies) {
  std::size_t keys = 0;
  for (const auto& group : groups) keys += group.size();
  for (std::size_t k = 0; k < keys; ++k)
    if (protocol::is_error_frame(replies[k]))
      return failed(source, "MEMORY USAGE: " + protocol::line_text(replies[k]));
  auto [max_keys, max_bytes] = chunk_bounds();
  std::size_t k = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Chunk chunk{targets[g], {}, 0};
    for (auto& key : groups[g]) {
      protocol::ReplyValue size;
      std::uint64_t bytes = 0;
      if (protocol::parse_reply(replies[k++], size) &&
          size.type == protocol::ReplyValue::Type::Integer)
        bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(size.integer, 0));
      progress_.largest_key_bytes = std::max(progress_.largest_key_bytes, bytes);
      if (!chunk.keys.empty() &&
          (chunk.keys.size() >= max_keys || (max_bytes > 0 && chunk.bytes + bytes > max_bytes)))
        source.chunks.push_back(std::exchange(chunk, Chunk{targets[g], {}, 0}));
      chunk.keys.push_back(std::move(key));
      chunk.bytes += bytes;
    }
    source.chunks.push_back(std::move(chunk));
  }
  source.cursor = next;
  if (next != "0") source.next_page = replies.back();
  next_chunk(source);
}

// At most batch_keys keys and batch_bytes bytes per MIGRATE; under a throttle, at most a
// millisecond of its budget (at least one key: a bigger key goes alone).
std::pair<std::size_t, std::uint64_t> Mover::chunk_bounds() const {
  const auto& settings = topology_->config->resharding;
  std::size_t keys = settings.batch_keys;
  std::uint64_t bytes = settings.batch_bytes;
  if (settings.max_keys_per_sec > 0)
    keys = std::min<std::size_t>(
        keys, std::max<std::uint64_t>(settings.max_keys_per_sec / kSlicesPerSecond, 1));
  if (settings.max_bytes_per_sec > 0) {
    auto slice = std::max<std::uint64_t>(settings.max_bytes_per_sec / kSlicesPerSecond, 1);
    bytes = bytes == 0 ? slice : std::min(bytes, slice);
  }
  return {std::max<std::size_t>(keys, 1), bytes};
}

// The next chunk of the page once the throttle's budget has room for it; the next page after
// the last one.
void Mover::next_chunk(Source& source) {
  if (stopped_) return;
  if (source.chunks.empty()) return advance(source);
  const Chunk& chunk = source.chunks.front();
  auto pause = throttle(chunk.keys.size(), chunk.bytes);
  if (pause.count() > 0) return later(source, pause, &Mover::migrate);
  migrate(source);
}

// The first chunk's MIGRATE, once the migration gate lets it run.
void Mover::migrate(Source& source) {
  if (stopped_) return;
  if (source.chunks.empty()) return advance(source);
  auto batch = std::make_shared<Batch>();
  batch->source = &source;
  batch->chunk = std::move(source.chunks.front());
  source.chunks.pop_front();
  batch->database = source.databases[source.db];
  const auto& map = *topology_->map;
  std::vector<std::string_view> keys(batch->chunk.keys.begin(), batch->chunk.keys.end());
  const auto& to = map.shard(batch->chunk.target).address;
  batch->request = marked_ ? migrate_unless_receiving(*topology_->config, to, batch->database, keys)
                           : migrate_command(*topology_->config, to, batch->database, keys);
  batch->claim.sources = {map.shard(source.shard).address.text()};
  batch->claim.targets = {to.text()};
  gate_.enter(io_, batch->claim, [this, alive = std::weak_ptr<bool>(alive_), gate = &gate_, batch] {
    if (alive.expired() || !*alive.lock()) return gate->leave(batch->claim);
    ++batches_->in_flight;
    if (marked_) return mark(batch);
    send(batch);
  });
}

// The page is done: the next one (asked already, or now), or the pass is.
void Mover::advance(Source& source) {
  if (stopped_) return;
  if (source.cursor == "0") return pass_done(source);
  scan(source);
}

// In a fleet: the batch's target marked as receiving (receiving_mark.h) before its MIGRATE
// goes out; a target that cannot be marked fails the batch with its answer. Replies may come
// after the walk stopped: they touch the mover only while it is alive.
void Mover::mark(const std::shared_ptr<Batch>& batch) {
  batch->holder = receiving_mark_holder();
  auto request = mark_receiving(batch->holder, topology_->config->resharding.migrate_timeout, 0);
  call_shard(*mark_connection(batch->chunk.target), {request},
             [this, alive = std::weak_ptr<bool>(alive_), done = finisher(batch),
              batch](std::vector<std::string> replies) {
               bool marked = replies[0].starts_with(":");
               bool live = !alive.expired() && *alive.lock();
               if (live && marked) return send(batch);
               if (live) unmark(*batch);
               done(marked ? "-ERR stopped" : replies[0]);
             });
}

void Mover::send(const std::shared_ptr<Batch>& batch) {
  call_shard(*batch->source->connection, {batch->request},
             [this, alive = std::weak_ptr<bool>(alive_), done = finisher(batch),
              batch](const std::vector<std::string>& replies) {
               if (!alive.expired() && *alive.lock() && marked_) unmark(*batch);
               done(replies[0]);
             });
}

void Mover::unmark(const Batch& batch) {
  call_shard(*mark_connection(batch.chunk.target), {unmark_receiving(batch.holder, 0)},
             [](const std::vector<std::string>&) {});
}

// What ends a batch once its MIGRATE's reply is in: it leaves the gate, a stop waiting for it
// goes on, and a walk still alive counts what moved and sends the page's next chunk. A batch
// Santral gave up on (an error where a reply should be) ends only once its source proves its
// MIGRATE done or dead (draining_connections.h): a MIGRATE running late must not meet one of
// the other direction. Keys a target already held (BUSYKEY) are settled first (key_conflict.h).
std::function<void(const std::string&)> Mover::finisher(const std::shared_ptr<Batch>& batch) {
  auto end = [this, alive = std::weak_ptr<bool>(alive_), gate = &gate_, batches = batches_,
              batch](const std::string& result) {
    gate->leave(batch->claim);
    if (--batches->in_flight == 0 && batches->drained)
      return std::exchange(batches->drained, nullptr)();
    if (alive.expired() || !*alive.lock()) return;
    moved(*batch, result);
  };
  return [this, alive = std::weak_ptr<bool>(alive_), batch,
          end = std::move(end)](const std::string& result) {
    auto settled = [this, alive, batch, end, result] {
      if (alive.expired() || !*alive.lock() || !busy_key(result)) return end(result);
      settle_busy_keys(*batch->source->connection,
                       *target_connection(batch->chunk.target, batch->database), batch->chunk.keys,
                       [end, result](const std::string& error) {
                         if (!error.empty())
                           spdlog::warn("resharding: {}; trying again on the next pass", error);
                         end(result);
                       });
    };
    if (!protocol::is_error_frame(result)) return settled();
    // Reported at once (STATUS, the log); the batch ends once its source has answered for it.
    if (!alive.expired() && *alive.lock() && !refused_as_receiving(result) && !busy_key(result)) {
      batch->reported = true;
      report(*batch->source, "MIGRATE", result);
    }
    DrainingConnections::of(io_).after(topology_->map->shard(batch->source->shard).address.text(),
                                       std::move(settled));
  };
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

// A chunk's MIGRATE answered (or proven over): counted, and the page's next chunk goes, after
// a pause when it failed (no hot loop against a shard that is down) or was refused (another
// router's MIGRATE in the way).
void Mover::moved(const Batch& batch, const std::string& result) {
  Source& source = *batch.source;
  std::chrono::steady_clock::duration pause{};
  if (migrated(result)) {
    if (result.starts_with("+OK")) {
      progress_.keys_moved += batch.chunk.keys.size();
      progress_.bytes_moved += batch.chunk.bytes;
      source.moved_this_pass += batch.chunk.keys.size();
    }
  } else if (refused_as_receiving(result) || busy_key(result)) {
    // Not an error (a MIGRATE of another router in the way, or copies settled already,
    // key_conflict.h): the next pass sends these again.
    source.refused_this_pass = true;
    pause = kRefusedPause;
  } else {
    source.failed_this_pass = true;
    if (!batch.reported) report(source, "MIGRATE", result);
    pause = kRetryAfter;
  }
  if (pause.count() > 0) return later(source, pause, &Mover::next_chunk);
  next_chunk(source);
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

void Mover::later(Source& source, std::chrono::steady_clock::duration after, Step step) {
  source.timer.expires_after(after);
  std::weak_ptr<bool> alive = alive_;
  source.timer.async_wait([this, alive, &source, step](boost::system::error_code ec) {
    if (!ec && !alive.expired() && *alive.lock()) (this->*step)(source);
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
    source.chunks.clear();
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
