#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace santral::router {

// A move across a fleet, as etcd keeps it under /santral/<name>/move (absent: no move):
//   {"format": 1, "state": "moving", "epoch": 2, "released": 1, "from_version": 41,
//    "from": "<shared config>", "to": "<shared config>", "proposed_by": "router-a"}
//
//   planned ──APPROVE──► moving (epoch 1) ──walk done──► (map := to, key deleted)
//      │                    │
//      └──ABORT──► (deleted) └──ABORT──► aborting (epoch 2) ──walk done──► (key deleted)
//
// Each switch of direction is a new epoch. Every router switches to the epoch's moving
// topology and holds its pulls; once every live router has acknowledged the epoch, the
// coordinator sets `released` to it, and pulls and the walk run.
struct MoveDocument {
  enum class Phase { Planned, Moving, Aborting };
  Phase phase = Phase::Planned;
  std::uint64_t epoch = 0;
  std::uint64_t released = 0;
  std::int64_t from_version = 0;  // the map version the move started from
  std::string from_text, to_text;
  std::string proposed_by;
};

std::string encode_move(const MoveDocument& move);
// nullopt with `error` naming the key and the field.
std::optional<MoveDocument> decode_move(std::string_view key, const std::string& value,
                                        std::string& error);
std::string_view phase_name(MoveDocument::Phase phase);

}  // namespace santral::router
