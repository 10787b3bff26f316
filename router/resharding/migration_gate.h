#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>

namespace santral::router {

// Redis's MIGRATE blocks its source until the target has restored the keys. Two shards each
// migrating to the other, at once, wait for each other until the MIGRATE timeout, and every
// client of both waits with them; so does any longer cycle. A move whose keys go one way only
// (a shard added or removed) never makes one; a change of hash, a swap of slots or a balance
// does. The gate lets a MIGRATE run only while its source is not the target of another one in
// flight and its target not the source of one: no shard is both, so no cycle can form. Every
// MIGRATE of this process passes it: the requests' pulls on every worker and the walk.
//
// Routers of a fleet keep the same rule together at the shards, with receiving marks
// (receiving_mark.h), behind this gate.
class MigrationGate {
 public:
  // The shards (by address) MIGRATEs run on and restore to.
  struct Claim {
    std::vector<std::string> sources;
    std::vector<std::string> targets;
  };

  // Runs `go` once `claim` may run: at once (here), or posted to `io` when the MIGRATEs in
  // its way are done. A claim that entered is left once its replies are in (or never sent).
  void enter(boost::asio::io_context& io, Claim claim, std::function<void()> go);
  void leave(const Claim& claim);

 private:
  bool fits(const Claim& claim) const;
  void take(const Claim& claim);

  std::mutex lock_;  // guards what follows: claims come from every worker and the server
  std::unordered_map<std::string, int> as_source_, as_target_;
  struct Waiting {
    boost::asio::io_context* io;
    Claim claim;
    std::function<void()> go;
  };
  std::deque<Waiting> waiting_;  // oldest first
};

}  // namespace santral::router
