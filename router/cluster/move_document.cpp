#include "router/cluster/move_document.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace santral::router {

using nlohmann::json;

namespace {
constexpr int kMoveFormat = 1;
}

std::string_view phase_name(MoveDocument::Phase phase) {
  switch (phase) {
    case MoveDocument::Phase::Planned:
      return "planned";
    case MoveDocument::Phase::Moving:
      return "moving";
    case MoveDocument::Phase::Aborting:
      return "aborting";
  }
  return "planned";
}

std::string encode_move(const MoveDocument& move) {
  return json{
      {"format", kMoveFormat},     {"state", phase_name(move.phase)},   {"epoch", move.epoch},
      {"released", move.released}, {"from_version", move.from_version}, {"from", move.from_text},
      {"to", move.to_text},        {"proposed_by", move.proposed_by}}
      .dump(2);
}

std::optional<MoveDocument> decode_move(std::string_view key, const std::string& value,
                                        std::string& error) {
  auto fail = [&](std::string_view field, std::string_view problem) {
    error = fmt::format("etcd key {}: field {}: {}", key, field, problem);
    return std::nullopt;
  };
  json document = json::parse(value, nullptr, false);
  if (document.is_discarded() || !document.is_object())
    return fail("(document)", "not a JSON object; SANTRAL RESHARD writes it");
  if (document.value("format", 0) != kMoveFormat)
    return fail("format", fmt::format("expected {}", kMoveFormat));
  MoveDocument move;
  std::string state = document.value("state", "");
  if (state == "planned")
    move.phase = MoveDocument::Phase::Planned;
  else if (state == "moving")
    move.phase = MoveDocument::Phase::Moving;
  else if (state == "aborting")
    move.phase = MoveDocument::Phase::Aborting;
  else
    return fail("state", "expected planned, moving or aborting");
  try {
    move.epoch = document.value("epoch", std::uint64_t{0});
    move.released = document.value("released", std::uint64_t{0});
    move.from_version = document.value("from_version", std::int64_t{0});
    move.from_text = document.value("from", "");
    move.to_text = document.value("to", "");
    move.proposed_by = document.value("proposed_by", "");
  } catch (const json::exception& e) {
    return fail("(a field)", e.what());
  }
  if (move.from_text.empty()) return fail("from", "missing");
  if (move.to_text.empty()) return fail("to", "missing");
  return move;
}

}  // namespace santral::router
