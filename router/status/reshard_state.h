#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "placement/diff.h"

namespace santral::router {

//   idle ──reload that moves keys──► planned ──APPROVE──► moving ──every unit done──► finishing ──►
//   idle
//                                      │                     │
//                                      └──ABORT──► idle      └──ABORT──► aborting (keys go back)
//                                      ──► idle
enum class ReshardState : std::uint8_t { Idle, Planned, Moving, Finishing, Aborting };
std::string_view reshard_state_name(ReshardState state);

// One unit of the plan, with what sampling the sources estimated and whether it is done.
struct UnitProgress {
  placement::MovingUnit unit;
  std::uint64_t keys_estimated = 0;
  std::uint64_t bytes_estimated = 0;
  bool done = false;
};

// What SANTRAL RESHARD STATUS / PLAN and GET /reshard say.
struct ReshardStatus {
  ReshardState state = ReshardState::Idle;
  std::uint64_t map_version = 0;  // the version the plan moves to
  std::vector<UnitProgress> units;
  std::uint64_t keys_moved = 0;
  std::uint64_t bytes_moved = 0;
  std::uint64_t errors = 0;
  std::string last_error;
  double keys_per_sec = 0;
  double eta_s = 0;
  double elapsed_s = 0;
  std::uint64_t largest_key_bytes = 0;  // the largest key the mover moved
  // While a switch of epoch waits for shards to prove that requests given up on will not run
  // late (router/backend/draining_connections.h): what it waits for; else empty.
  std::string waiting_for;
  std::uint64_t conflicts = 0;  // keys found on both shards with different values, kept apart

  std::size_t units_done() const;
  std::uint64_t keys_estimated() const;
  std::uint64_t bytes_estimated() const;
};

nlohmann::json to_json(const ReshardStatus& status);
// The fields of STATUS as name/value pairs, in order (a RESP map).
std::vector<std::pair<std::string, std::string>> status_fields(const ReshardStatus& status);
// PLAN: one line per unit, for people and the log.
std::string describe_plan(const ReshardStatus& status);

}  // namespace santral::router
