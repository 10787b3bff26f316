#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "placement/topology.h"
#include "router/backend/backend_connection.h"
#include "router/metrics/stats.h"
#include "router/resharding/migration_gate.h"

namespace santral::router {

// The background half of a move: walks every shard the keys may be leaving with SCAN, keeps
// the keys whose owner differs between the move's two maps, and MIGRATEs them to their new
// owner (the request path pulls the keys it needs on its own, key_pull.h). A source is done
// when a whole SCAN pass finds nothing left to move. Bounded by resharding.max_keys_per_sec /
// max_bytes_per_sec; a shard that fails pauses its walk, which resumes where it was once the
// shard answers again. Runs on the server's thread.
//
//   SCAN c COUNT batch ──► keys whose owner changes ──► MEMORY USAGE each + the next SCAN
//        └─ none, cursor 0, and the pass moved nothing: source done      (one round trip)
//   ──► chunks per target (batch_keys, batch_bytes; throttled: a millisecond of the budget)
//   ──► one MIGRATE per chunk, alone on its round trip
//
// A MIGRATE holds its source until the target restored what it sent, and a shard runs what one
// connection sent back to back: so nothing rides behind a MIGRATE, and a throttled walk sends
// MIGRATEs of a millisecond's budget each, so that other clients of the source wait for short
// ones rather than long ones (docs/benchmarks.md, unrelated keys during a move).
class Mover {
 public:
  struct Progress {
    std::uint64_t keys_moved = 0;
    std::uint64_t bytes_moved = 0;
    std::uint64_t errors = 0;
    std::string last_error;
    std::uint64_t largest_key_bytes = 0;
  };

  // `topology` carries the move (topology->move); `done` runs once every source is done. Each
  // batch's MIGRATEs pass `gate` (migration_gate.h).
  Mover(boost::asio::io_context& io, placement::TopologyPtr topology, MigrationGate& gate,
        std::function<void()> done);
  ~Mover();
  Mover(const Mover&) = delete;
  Mover& operator=(const Mover&) = delete;

  void start();
  // Now: its connections close (a MIGRATE already sent runs on at its source; what they gave
  // up on drains, draining_connections.h).
  void stop();
  // Without starting another batch; `stopped` runs once the batch in flight has its replies,
  // or its source proved it over, and what the walk's connections gave up on is proven (a
  // switch of direction waits for it: the old direction's MIGRATE must not land late).
  void stop(std::function<void()> stopped);
  const Progress& progress() const { return progress_; }
  // Whether the walk of `shard` (the topology's index) has found nothing left to move.
  bool source_done(std::size_t shard) const;

 private:
  struct Source;
  // Keys of one SCAN page that go to one target: one MIGRATE.
  struct Chunk {
    std::size_t target = 0;
    std::vector<std::string> keys;
    std::uint64_t bytes = 0;  // by MEMORY USAGE
  };
  // A chunk on its way: its MIGRATE behind the gate (in a fleet, behind its target's mark).
  struct Batch {
    Source* source = nullptr;
    Chunk chunk;
    std::string request;
    int database = 0;
    bool reported = false;  // its failure counted already, while its source was proving it over
    MigrationGate::Claim claim;
    std::string holder;  // of its receiving mark, in a fleet
  };
  using Step = void (Mover::*)(Source&);
  void begin(Source& source);
  std::string scan_request(std::string_view cursor) const;
  void scan(Source& source);
  void scanned(Source& source, const std::string& reply);
  void sized(Source& source, std::vector<std::size_t> targets,
             std::vector<std::vector<std::string>> groups, const std::string& next,
             const std::vector<std::string>& replies);
  void next_chunk(Source& source);
  void migrate(Source& source);
  void advance(Source& source);
  std::pair<std::size_t, std::uint64_t> chunk_bounds() const;
  void mark(const std::shared_ptr<Batch>& batch);
  void send(const std::shared_ptr<Batch>& batch);
  void unmark(const Batch& batch);
  std::function<void(const std::string&)> finisher(const std::shared_ptr<Batch>& batch);
  BackendConnection* mark_connection(std::size_t shard);
  BackendConnection* target_connection(std::size_t shard, int database);
  void moved(const Batch& batch, const std::string& result);
  void report(const Source& source, std::string_view what, const std::string& reply);
  void failed(Source& source, const std::string& what);
  void pass_done(Source& source);
  void later(Source& source, std::chrono::steady_clock::duration after, Step step);
  void check_deadlines();
  std::chrono::steady_clock::duration throttle(std::uint64_t keys, std::uint64_t bytes);

  boost::asio::io_context& io_;
  placement::TopologyPtr topology_;
  MigrationGate& gate_;
  std::function<void()> done_;
  std::shared_ptr<const config::Config> walk_config_;  // the walk's longer request timeout
  std::chrono::steady_clock::time_point budget_{};     // the throttle's shared clock
  std::vector<std::unique_ptr<Source>> sources_;
  boost::asio::steady_timer deadlines_;
  Progress progress_;
  bool stopped_ = false;
  bool marked_;  // in a fleet: MIGRATEs behind receiving marks (receiving_mark.h)
  std::map<std::size_t, BackendConnectionPtr> mark_connections_;
  std::map<std::pair<std::size_t, int>, BackendConnectionPtr> target_connections_;
  ShardStats mark_stats_;
  std::shared_ptr<bool> alive_;
  struct Batches {
    int in_flight = 0;  // batches whose MIGRATE is out
    std::function<void()> drained;
  };
  std::shared_ptr<Batches> batches_ = std::make_shared<Batches>();
};

}  // namespace santral::router
