#include "router/status/reshard_state.h"

#include <fmt/format.h>

namespace santral::router {

std::string_view reshard_state_name(ReshardState state) {
  switch (state) {
    case ReshardState::Idle:
      return "idle";
    case ReshardState::Planned:
      return "planned";
    case ReshardState::Moving:
      return "moving";
    case ReshardState::Finishing:
      return "finishing";
    case ReshardState::Aborting:
      return "aborting";
  }
  return "idle";
}

std::size_t ReshardStatus::units_done() const {
  std::size_t done = 0;
  for (const auto& unit : units) done += unit.done ? 1 : 0;
  return done;
}

std::uint64_t ReshardStatus::keys_estimated() const {
  std::uint64_t keys = 0;
  for (const auto& unit : units) keys += unit.keys_estimated;
  return keys;
}

std::uint64_t ReshardStatus::bytes_estimated() const {
  std::uint64_t bytes = 0;
  for (const auto& unit : units) bytes += unit.bytes_estimated;
  return bytes;
}

nlohmann::json to_json(const ReshardStatus& status) {
  nlohmann::json moves = nlohmann::json::array();
  for (const auto& u : status.units)
    moves.push_back({{"placement", u.unit.placement},
                     {"unit", u.unit.what},
                     {"from", u.unit.from},
                     {"to", u.unit.to},
                     {"share", u.unit.share},
                     {"keys_estimated", u.keys_estimated},
                     {"bytes_estimated", u.bytes_estimated},
                     {"done", u.done}});
  return {{"state", reshard_state_name(status.state)},
          {"map_version", status.map_version},
          {"units_total", status.units.size()},
          {"units_done", status.units_done()},
          {"keys_estimated", status.keys_estimated()},
          {"bytes_estimated", status.bytes_estimated()},
          {"keys_moved", status.keys_moved},
          {"bytes_moved", status.bytes_moved},
          {"keys_per_sec", status.keys_per_sec},
          {"eta_s", status.eta_s},
          {"elapsed_s", status.elapsed_s},
          {"errors", status.errors},
          {"last_error", status.last_error},
          {"largest_key_bytes", status.largest_key_bytes},
          {"waiting_for", status.waiting_for},
          {"conflicts", status.conflicts},
          {"moves", moves}};
}

std::vector<std::pair<std::string, std::string>> status_fields(const ReshardStatus& status) {
  return {{"state", std::string(reshard_state_name(status.state))},
          {"map_version", std::to_string(status.map_version)},
          {"units_total", std::to_string(status.units.size())},
          {"units_done", std::to_string(status.units_done())},
          {"keys_estimated", std::to_string(status.keys_estimated())},
          {"bytes_estimated", std::to_string(status.bytes_estimated())},
          {"keys_moved", std::to_string(status.keys_moved)},
          {"bytes_moved", std::to_string(status.bytes_moved)},
          {"keys_per_sec", fmt::format("{:.0f}", status.keys_per_sec)},
          {"eta_s", fmt::format("{:.1f}", status.eta_s)},
          {"elapsed_s", fmt::format("{:.1f}", status.elapsed_s)},
          {"errors", std::to_string(status.errors)},
          {"last_error", status.last_error},
          {"largest_key_bytes", std::to_string(status.largest_key_bytes)},
          {"waiting_for", status.waiting_for},
          {"conflicts", std::to_string(status.conflicts)}};
}

std::string describe_plan(const ReshardStatus& status) {
  if (status.units.empty()) return "nothing moves";
  std::string text = fmt::format(
      "{} unit{} move to map version {} (about {} keys, {} bytes, from sampling the sources):",
      status.units.size(), status.units.size() == 1 ? "" : "s", status.map_version,
      status.keys_estimated(), status.bytes_estimated());
  for (const auto& u : status.units) {
    text += fmt::format("\n  {}: {} from {} to {}", u.unit.placement, u.unit.what, u.unit.from,
                        u.unit.to);
    if (u.unit.share > 0) text += fmt::format(" ({:.2f}% of it)", u.unit.share * 100);
    text += fmt::format(", ~{} keys, ~{} bytes{}", u.keys_estimated, u.bytes_estimated,
                        u.done ? ", done" : "");
  }
  return text;
}

}  // namespace santral::router
