#include "router/resharding/fleet_ledger.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "protocol/errors.h"
#include "router/cluster/map_document.h"

namespace santral::router {

namespace {

using Compare = EtcdClient::Compare;
using Phase = MoveDocument::Phase;

// An epoch no earlier switch of any move has had: past the document's last revision.
std::uint64_t next_epoch(const MoveDocument& document, std::int64_t mod_revision) {
  return std::max<std::uint64_t>(document.epoch, static_cast<std::uint64_t>(mod_revision)) + 1;
}

}  // namespace

FleetLedger::FleetLedger(FleetAgent& agent, std::function<std::string()> map_text,
                         std::function<std::string()> naming_text)
    : agent_(agent), map_text_(std::move(map_text)), naming_text_(std::move(naming_text)) {}

std::optional<LedgerMove> FleetLedger::read(const EtcdKeyValue& kv, std::string& error) const {
  auto document = decode_move(kv.key, kv.value, error);
  if (!document) return std::nullopt;
  return LedgerMove{std::move(*document), kv.create_revision, kv.mod_revision};
}

void FleetLedger::propose(MoveDocument document, Done done) {
  std::string move_key = agent_.move_key(), map_key = agent_.map_key();
  auto made = std::make_shared<LedgerMove>();
  agent_.call(
      [document, move_key, map_key, made](EtcdClient& etcd, std::int64_t& revision) mutable {
        auto current = etcd.range(move_key);
        std::int64_t replaced = 0, id = 0;
        if (!current.kvs.empty()) {
          std::string error;
          auto existing = decode_move(move_key, current.kvs.front().value, error);
          if (existing && existing->phase != Phase::Planned)
            return protocol::error_message(protocol::ClientError::ReshardBusy,
                                           phase_name(existing->phase));
          replaced = current.kvs.front().mod_revision;
          id = current.kvs.front().create_revision;
        }
        bool approved = document.phase != Phase::Planned;
        MoveDocument planned = document;
        planned.phase = Phase::Planned;
        planned.epoch = 0;
        auto written =
            etcd.txn({{move_key, Compare::Target::ModRevision, replaced, {}},
                      {map_key, Compare::Target::ModRevision, document.from_version, {}}},
                     {{move_key, encode_move(planned), 0}}, {});
        if (!written)
          return std::string(
              "another move was planned or the map changed meanwhile; look at SANTRAL RESHARD "
              "STATUS and SANTRAL SHARDMAP, then propose again");
        *made = {planned, id != 0 ? id : *written, *written};
        revision = *written;
        if (!approved) return std::string();
        // resharding.auto_approve: approved at once, with an epoch past the planned write.
        MoveDocument moving = planned;
        moving.phase = Phase::Moving;
        moving.epoch = next_epoch(planned, *written);
        auto approved_at = etcd.txn({{move_key, Compare::Target::ModRevision, *written, {}}},
                                    {{move_key, encode_move(moving), 0}}, {});
        if (!approved_at)
          return std::string("the move was planned, but changed before it could be approved");
        *made = {moving, made->id, *approved_at};
        revision = *approved_at;
        return std::string();
      },
      [this, made, done = std::move(done)](std::int64_t, const std::string& error) {
        if (error.empty() && changed_) changed_(*made);
        done(error.empty() ? error
                           : protocol::error_message(protocol::ClientError::MapProposal, error));
      });
}

void FleetLedger::approve(Done done) {
  change("approve", std::move(done));
}

void FleetLedger::abort(Done done) {
  change("abort", std::move(done));
}

// APPROVE and ABORT, through any router: a compare-and-swap on the document as it is now.
void FleetLedger::change(const std::string& verb, Done done) {
  bool approve = verb == "approve";
  std::string key = agent_.move_key();
  auto made = std::make_shared<std::optional<LedgerMove>>();
  agent_.call(
      [key, approve, made](EtcdClient& etcd, std::int64_t& revision) {
        auto current = etcd.range(key);
        if (current.kvs.empty())
          return approve ? protocol::error_message(protocol::ClientError::ReshardNothingPlanned)
                         : protocol::error_message(protocol::ClientError::ReshardNotMoving, "idle");
        const auto& kv = current.kvs.front();
        std::string error;
        auto move = decode_move(key, kv.value, error);
        if (!move) return "ERR santral: " + error;
        std::vector<EtcdClient::Put> puts;
        std::vector<std::string> deletes;
        if (approve) {
          if (move->phase != Phase::Planned)
            return protocol::error_message(protocol::ClientError::ReshardBusy,
                                           phase_name(move->phase));
          move->phase = Phase::Moving;
          move->epoch = next_epoch(*move, kv.mod_revision);
        } else if (move->phase == Phase::Planned) {
          deletes.push_back(key);
        } else if (move->phase == Phase::Moving) {
          move->phase = Phase::Aborting;
          move->epoch = next_epoch(*move, kv.mod_revision);
          move->released = 0;
        } else {
          return protocol::error_message(protocol::ClientError::ReshardNotMoving,
                                         phase_name(move->phase));
        }
        if (deletes.empty()) puts.push_back({key, encode_move(*move), 0});
        auto result =
            etcd.txn({{key, Compare::Target::ModRevision, kv.mod_revision, {}}}, puts, deletes);
        if (!result) return std::string("ERR santral: the move changed meanwhile; try again");
        revision = *result;
        if (deletes.empty()) *made = LedgerMove{*move, kv.create_revision, *result};
        return std::string();
      },
      [this, made, done = std::move(done)](std::int64_t, const std::string& error) {
        // Taken at once here; the other routers take it at their next read of etcd.
        if (error.empty() && changed_) changed_(*made);
        done(error);
      });
}

void FleetLedger::acknowledge(std::int64_t id, std::uint64_t epoch) {
  agent_.acknowledge_move(id, epoch);
}

// Every live router, and no router left out lately: one whose lease expired may still
// believe it serves until its own 2/3 of the lease have run out; the fleet waits a lease and a
// margin after its registration went (FleetView::departed).
bool FleetLedger::all_acknowledged(std::int64_t id, std::uint64_t epoch) const {
  auto view = agent_.view();
  if (!view.departed.empty()) return false;
  for (const auto& router : view.routers)
    if (router.move_id != id || router.move_epoch < epoch) return false;
  return true;
}

std::uint64_t FleetLedger::walk_reported(std::int64_t id) const {
  std::uint64_t keys = 0;
  for (const auto& router : agent_.view().routers)
    if (router.move_id == id) keys = std::max(keys, router.keys_moved);
  return keys;
}

void FleetLedger::release(const LedgerMove& move, Done done) {
  std::string text = encode_move(move.document), key = agent_.move_key();
  std::string holder = agent_.coordinator_key(), me = agent_.router_name();
  auto lease = agent_.lease();
  auto revision = move.revision;
  auto id = move.id;
  auto document = move.document;
  agent_.call(
      [text, key, holder, me, lease, revision](EtcdClient& etcd, std::int64_t& made) {
        auto written = etcd.txn({{key, Compare::Target::ModRevision, revision, {}},
                                 {holder, Compare::Target::Value, 0, me},
                                 {holder, Compare::Target::Lease, lease, {}}},
                                {{key, text, 0}}, {});
        if (!written) return std::string("the move changed meanwhile");
        made = *written;
        return std::string();
      },
      [this, id, document, done = std::move(done)](std::int64_t made, const std::string& error) {
        if (error.empty() && changed_) changed_(LedgerMove{document, id, made});
        done(error);
      });
}

void FleetLedger::finish(const LedgerMove& move, Done done) {
  bool back = move.document.phase == Phase::Aborting;
  std::vector<Compare> compares = {
      {agent_.move_key(), Compare::Target::ModRevision, move.revision, {}},
      {agent_.coordinator_key(), Compare::Target::Value, 0, agent_.router_name()},
      {agent_.coordinator_key(), Compare::Target::Lease, agent_.lease(), {}}};
  std::vector<EtcdClient::Put> puts;
  if (!back) {
    compares.push_back(
        {agent_.map_key(), Compare::Target::ModRevision, move.document.from_version, {}});
    std::string naming = naming_text_();
    if (naming.empty()) naming = move.document.from_text;
    puts.push_back({agent_.map_key(),
                    encode_map({move.document.to_text, agent_.router_name(),
                                move.document.from_version, move.document.from_version, naming}),
                    0});
  }
  std::vector<std::string> deletes = {agent_.move_key()};
  agent_.call(
      [compares, puts, deletes](EtcdClient& etcd, std::int64_t& made) {
        auto written = etcd.txn(compares, puts, deletes);
        if (!written) return std::string("the move or the map changed meanwhile");
        made = *written;
        return std::string();
      },
      // Every router, this one too, takes the map and the move's end at its next read.
      [done = std::move(done)](std::int64_t, const std::string& error) { done(error); });
}

}  // namespace santral::router
