#include "router/resharding/local_start.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "placement/change.h"
#include "placement/diff.h"
#include "router/resharding/moving_topology.h"

namespace santral::router {

LocalStart restore_local_moves(LocalLedger& ledger, MoveHost& host,
                               const placement::TopologyPtr& file,
                               const std::filesystem::path& config_path) {
  LocalStart out{file, std::nullopt, nullptr, {}, false};
  LocalLedger::Kept kept;
  try {
    kept = ledger.load();
  } catch (const StateFileError& e) {
    out.error = e.what();
    return out;
  }
  const config::Config& config = *file->config;
  auto load = [&](const std::string& text, std::string_view what) {
    std::string error;
    auto topology = host.topology_of(text, error);
    if (!topology)
      out.error = fmt::format("{}: {} kept there does not load any more: {}",
                              ledger.path().string(), what, error);
    else
      topology->version = host.next_version();
    return topology;
  };
  std::shared_ptr<const placement::ShardMap> naming;
  if (!ledger.naming_text().empty()) {
    auto named = load(ledger.naming_text(), "the config salted counters are named by");
    if (!named) return out;
    naming = named->map;
  }
  if (kept.move) {
    const auto& document = kept.move->document;
    auto from = load(document.from_text, "the config the move starts from");
    auto to = from ? load(document.to_text, "the config the move goes to") : nullptr;
    if (!to) return out;
    from->salt_naming = naming;
    to->salt_naming = naming ? naming : from->map;
    if (document.phase == MoveDocument::Phase::Planned) {
      out.topology = from;
    } else {
      bool back = document.phase == MoveDocument::Phase::Aborting;
      out.topology = moving_topology(back ? *to : *from, back ? *from : *to, host.next_version(),
                                     document.epoch);
    }
    out.kept_move = kept.move;
    spdlog::info("resharding: {} holds a move ({}); it resumes", ledger.path().string(),
                 phase_name(document.phase));
    return out;
  }
  auto from_file = std::make_shared<placement::Topology>(*file);
  from_file->salt_naming = naming;
  if (!kept.in_force_text.empty()) {
    auto in_force = load(kept.in_force_text, "the config in force");
    if (!in_force) return out;
    in_force->salt_naming = naming;
    bool random = config.distribution == config::Distribution::Random ||
                  in_force->config->distribution == config::Distribution::Random;
    if (!random && !placement::moving_units(*in_force->map, *from_file->map).empty()) {
      // Keys are where the map in force put them: the file's map is a move to plan, never a
      // silent switch.
      spdlog::warn(
          "resharding: the map of {} differs from the map in force kept in {}; serving the "
          "map in force and planning a move to the file's ({})",
          config_path.string(), ledger.path().string(),
          placement::compare_placement(*in_force->map, *from_file->map).summary());
      out.planned = from_file;
      out.topology = in_force;
      return out;
    }
  }
  out.topology = from_file;
  out.file_in_force = true;
  return out;
}

}  // namespace santral::router
