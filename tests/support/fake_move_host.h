#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "placement/topology.h"
#include "router/resharding/migration_gate.h"
#include "router/resharding/move_driver.h"

namespace santral::test {

// A MoveHost for unit tests of moves: topologies come from config text, a switch takes effect
// at once, and the switches and releases are counted.
class FakeMoveHost final : public router::MoveHost {
 public:
  explicit FakeMoveHost(std::uint64_t first_version = 10) : version_(first_version) {}

  std::uint64_t next_version() override { return ++version_; }
  const placement::TopologyPtr& serving() const override { return serving_; }
  void switch_topology(placement::TopologyPtr topology, std::function<void()> done) override {
    ++switches;
    serving_ = std::move(topology);
    done();
  }
  void release_pulls() override { ++releases; }
  router::MigrationGate& migrations() override { return gate_; }
  std::shared_ptr<placement::Topology> topology_of(const std::string& text,
                                                   std::string& error) override {
    try {
      return std::make_shared<placement::Topology>(
          *placement::make_topology(config::parse_config(text, "kept.yaml"), 0));
    } catch (const std::exception& e) {
      error = e.what();
      return nullptr;
    }
  }
  void serve(placement::TopologyPtr topology) { serving_ = std::move(topology); }
  std::uint64_t version() const { return version_; }

  int switches = 0;
  int releases = 0;

 private:
  std::uint64_t version_;
  placement::TopologyPtr serving_;
  router::MigrationGate gate_;
};

}  // namespace santral::test
