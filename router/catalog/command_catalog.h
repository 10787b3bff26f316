#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "placement/topology.h"
#include "protocol/learned_commands.h"
#include "router/backend/connection_pool.h"

namespace santral::router {

// What the shards know, read from each shard's primary whenever Santral connects to it:
// its version (INFO server's redis_version) and its commands (COMMAND, then COMMAND DOCS for
// the ones the built-in table lacks). From those and the config's `commands:` it makes the
// LearnedCommands snapshot (protocol/learned_commands.h) that every worker routes by, and
// hands a new one to `publish` whenever what is known changes.
//
//   worker 0's connection to a shard ──ready──► INFO server, COMMAND ──► reading of that shard
//        (at start, after a reconnect or            │
//         after the shard was down)                  ▼
//   every shard's reading + commands: ──► CommandArchive::build ──► publish(snapshot)
//                                                                   (posted to every worker)
//
// Used on one worker's thread only (the first worker's), so it takes no lock; the snapshots it
// publishes are immutable.
class CommandCatalog {
 public:
  using Publish = std::function<void(std::shared_ptr<const protocol::LearnedCommands>)>;

  // Follows `topology`'s shards through `pool` (that worker's) and its `commands:`: reads the
  // shards not read yet, and again whenever their connection for client 0 is ready anew.
  void follow(ConnectionPool& pool, const placement::Topology& topology, Publish publish);

  // What a reading got; for the tests of the catalog and for the log.
  struct Reading {
    bool answered = false;
    std::string version;
    std::vector<protocol::CommandShape> commands;
    std::uint64_t asked = 0;  // which ask the replies in flight belong to
    bool in_flight = false;
  };

 private:
  class ReadingSink;
  void read(BackendConnection& connection, const std::string& address);
  void took_info(const std::string& address, std::uint64_t asked, std::string_view reply);
  void took_commands(const std::string& address, std::uint64_t asked, std::string_view reply,
                     BackendConnection* connection);
  void took_docs(const std::string& address, std::uint64_t asked, std::string_view reply);
  void failed(const std::string& address, std::uint64_t asked, std::string_view reply);
  void rebuild();

  std::map<std::string, Reading> readings_;  // by the primary's address
  std::vector<std::string> shards_;          // the addresses, in the map's order
  std::vector<protocol::CommandShape> declared_;
  protocol::CommandArchive archive_;
  std::shared_ptr<const protocol::LearnedCommands> last_;
  std::uint64_t asks_ = 0;
  Publish publish_;
};

}  // namespace santral::router
