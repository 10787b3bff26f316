#pragma once

#include <functional>
#include <optional>
#include <string>

#include "router/cluster/etcd_client.h"
#include "router/cluster/fleet_agent.h"
#include "router/resharding/move_ledger.h"

namespace santral::router {

// A fleet's move ledger: the move document in etcd (router/cluster/move_document.h), changed
// only by compare-and-swap, and the routers' registrations (what each has acknowledged). Every
// write runs on the agent's thread; its outcome comes back on the server's.
//
//   propose   the move key must be absent (or the planned move it replaces), the map unchanged
//   approve   planned -> moving; abort: planned -> deleted, moving -> aborting. Each new
//             epoch is one past the document's mod_revision: an etcd revision no earlier
//             epoch of any move can have reached
//   release   compared on the document's revision and on this router holding the coordinator
//   finish    the destination map (with its lineage, moved_from, and the map salted counters
//             keep their names by: the source's, or the one it had) and the document's
//             deletion in one transaction; every router takes both at its next read
class FleetLedger final : public MoveLedger {
 public:
  // `map_text`: the shared part of the map this router serves (what a move starts from);
  // `naming_text`: of the map salted counters are named by (empty: the map's own).
  FleetLedger(FleetAgent& agent, std::function<std::string()> map_text,
              std::function<std::string()> naming_text);

  // A move document read from etcd, as the driver takes it; nullopt (with `error`) when it is
  // not one.
  std::optional<LedgerMove> read(const EtcdKeyValue& kv, std::string& error) const;
  // Where writes that took effect are told at once (the driver), before the next read.
  void on_change(std::function<void(const std::optional<LedgerMove>&)> changed) {
    changed_ = std::move(changed);
  }

  void propose(MoveDocument document, Done done) override;
  void approve(Done done) override;
  void abort(Done done) override;
  void acknowledge(std::int64_t id, std::uint64_t epoch) override;
  bool all_acknowledged(std::int64_t id, std::uint64_t epoch) const override;
  void release(const LedgerMove& move, Done done) override;
  void finish(const LedgerMove& move, Done done) override;
  void report_walk(std::uint64_t keys_moved) override { agent_.report_walk(keys_moved); }
  std::uint64_t walk_reported(std::int64_t id) const override;
  std::string in_force_text() const override { return map_text_(); }

 private:
  void change(const std::string& verb, Done done);

  FleetAgent& agent_;
  std::function<std::string()> map_text_;
  std::function<std::string()> naming_text_;
  std::function<void(const std::optional<LedgerMove>&)> changed_;
};

}  // namespace santral::router
