// The pull of moving keys before a request runs (router/routes/key_pull.h), through dispatch
// and a fake client: a worker serving a move from three shards to four, where some keys have
// a new owner and must first be MIGRATEd from their old one. The fake's connections are never
// started: a MIGRATE queues on its source (requests_to/bytes_to show it), and its reply is
// either delivered to the pull's hidden slot by the test (as the shard's answer would be) or
// made by stopping the source's connection (every request on it fails).
#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "placement/shard_map.h"
#include "placement/topology.h"
#include "protocol/errors.h"
#include "router/plan/dispatch.h"
#include "router/resharding/migrate.h"
#include "router/resharding/moving_topology.h"
#include "router/routes/key_pull.h"
#include "tests/support/fake_request_context.h"
#include "tests/support/planned_request.h"

using namespace santral;
using router::Dispatched;
using test::FakeRequestContext;
using test::FakeWorkerServices;

namespace {

// kFourShards without shard3: the map the keys are leaving.
const std::string kThreeShards =
    "shards:\n"
    "  - {name: shard0, address: 127.0.0.1:7000}\n"
    "  - {name: shard1, address: 127.0.0.1:7001}\n"
    "  - {name: shard2, address: 127.0.0.1:7002}\n";

placement::TopologyPtr topology_of(const std::string& yaml, std::uint64_t version) {
  return placement::make_topology(config::parse_config(yaml, "test.yaml"), version);
}

// A worker serving a move from three shards to four (shard3 added). The three shards keep
// their indices, so a key's old owner is its shard in the three-shard map.
struct Moving {
  FakeWorkerServices worker{test::kFourShards};
  placement::TopologyPtr from = topology_of(kThreeShards, 1);

  Moving() { worker.serve(router::moving_topology(*from, worker.topology(), 2, 1)); }

  std::size_t old_owner(std::string_view key) const { return from->map->shard_for_key(key); }
  std::size_t new_owner(std::string_view key) const {
    return worker.shard_map().shard_for_key(key);
  }
  bool moves(std::string_view key) const { return old_owner(key) != new_owner(key); }

  // The first key named prefix<n> that moves (or not) and, when given, from `source` to
  // `target`.
  std::string key(bool moving, const std::string& prefix = "k",
                  std::optional<std::size_t> source = std::nullopt,
                  std::optional<std::size_t> target = std::nullopt) const {
    for (int i = 0; i < 100000; ++i) {
      std::string key = prefix + std::to_string(i);
      if (moves(key) != moving) continue;
      if (source && old_owner(key) != *source) continue;
      if (target && new_owner(key) != *target) continue;
      return key;
    }
    throw std::logic_error("no such key under this move");
  }

  // The MIGRATE that pulls `keys` to `target`, as the shard would receive it.
  std::size_t migrate_bytes(std::size_t target, std::vector<std::string_view> keys) const {
    return router::migrate_command(worker.config(), worker.shard_map().shard(target).address, 0,
                                   keys)
        .size();
  }
};

Dispatched dispatch(FakeRequestContext& client, std::vector<std::string> args) {
  return test::dispatch_request(client, std::move(args));
}

// The hidden slots the client opened (pulls), oldest first.
std::vector<std::uint64_t> hidden_slots(const FakeRequestContext& client) {
  std::vector<std::uint64_t> hidden;
  for (const auto& [id, slot] : client.slots())
    if (slot.hidden) hidden.push_back(id);
  return hidden;
}

std::uint64_t requests_to_all(const FakeRequestContext& client, std::size_t shards) {
  std::uint64_t total = 0;
  for (std::size_t s = 0; s < shards; ++s) total += client.requests_to(s);
  return total;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

TEST_CASE("a request whose keys are not moving pulls nothing and runs at once") {
  Moving move;
  REQUIRE(move.worker.topology().move != nullptr);
  FakeRequestContext client(move.worker);
  auto settled = move.key(false);
  auto other = move.key(false, "s");

  CHECK(dispatch(client, {"GET", settled}) == Dispatched::Done);
  CHECK(client.plan().pulls.empty());
  REQUIRE(client.forwarded.size() == 1);
  CHECK(client.forwarded[0].shard == move.new_owner(settled));
  dispatch(client, {"MSET", settled, "1", other, "2"});
  CHECK(client.plan().pulls.empty());

  CHECK(hidden_slots(client).empty());
  CHECK(requests_to_all(client, 4) == 0);              // no MIGRATE anywhere
  CHECK(client.pull_outcome().topology_version == 0);  // no pull was started
}

TEST_CASE("a moving key is MIGRATEd from its old shard to its new one before the request runs") {
  Moving move;
  FakeRequestContext client(move.worker);
  client.state().requests_dispatched = 7;
  auto key = move.key(true);
  std::size_t source = move.old_owner(key), target = move.new_owner(key);

  CHECK(dispatch(client, {"GET", key}) == Dispatched::AfterEarlierReplies);
  CHECK(client.forwarded.empty());  // the GET waits for the pull
  const auto& pulls = client.plan().pulls;
  REQUIRE(pulls.size() == 1);
  CHECK(pulls[0].source == source);
  CHECK(pulls[0].target == target);
  CHECK(pulls[0].keys == std::vector<std::string>{key});

  // One MIGRATE, on the source's connection, naming the target and the key; nothing else.
  CHECK(client.requests_to(source) == 1);
  CHECK(client.bytes_to(source) == move.migrate_bytes(target, {key}));
  CHECK(requests_to_all(client, 4) == 1);
  auto hidden = hidden_slots(client);
  REQUIRE(hidden.size() == 1);
  CHECK(client.slots().at(hidden[0]).fragments == 1);
  CHECK(client.opened_slots() == 0);  // nothing the client will read

  const auto& outcome = client.pull_outcome();
  CHECK(outcome.request == 7);
  CHECK(outcome.topology_version == move.worker.topology().version);
  CHECK_FALSE(outcome.done);
  CHECK_FALSE(outcome.answers(7, move.worker.topology().version));

  // The shard answers the MIGRATE: the pull is done, and the client was told nothing.
  client.deliver(hidden[0], 0, "+OK\r\n");
  CHECK(outcome.answers(7, move.worker.topology().version));
  CHECK(outcome.error.empty());
  CHECK(client.replies.empty());

  // The same request, round again: it runs on the key's new shard, from its primary, with no
  // second MIGRATE.
  CHECK(dispatch(client, {"GET", key}) == Dispatched::Done);
  REQUIRE(client.forwarded.size() == 1);
  CHECK(client.forwarded[0].shard == target);
  CHECK(client.plan().connection == router::ConnectionKind::Primary);  // not a replica
  CHECK(requests_to_all(client, 4) == 1);
  CHECK(hidden_slots(client).size() == 1);
}

TEST_CASE("NOKEY (the key was nowhere) counts as pulled") {
  Moving move;
  FakeRequestContext client(move.worker);
  auto key = move.key(true);
  dispatch(client, {"GET", key});
  auto hidden = hidden_slots(client);
  REQUIRE(hidden.size() == 1);
  client.deliver(hidden[0], 0, "+NOKEY\r\n");
  CHECK(client.pull_outcome().done);
  CHECK(client.pull_outcome().error.empty());
  CHECK(dispatch(client, {"GET", key}) == Dispatched::Done);
  CHECK(client.forwarded.size() == 1);
}

TEST_CASE("keys moving between the same two shards share a MIGRATE; each pair goes in turn") {
  Moving move;
  FakeRequestContext client(move.worker);
  // Two keys from one source to shard3 and a third from another source: two groups.
  auto first = move.key(true, "a");
  std::size_t source = move.old_owner(first), target = move.new_owner(first);
  auto second = move.key(true, "b", source, target);
  std::size_t other_source = (source + 1) % 3;
  auto third = move.key(true, "c", other_source);
  std::size_t other_target = move.new_owner(third);

  CHECK(dispatch(client, {"MGET", first, third, second}) == Dispatched::AfterEarlierReplies);
  const auto& pulls = client.plan().pulls;
  REQUIRE(pulls.size() == 2);
  CHECK(pulls[0].source == source);
  CHECK(pulls[0].keys == std::vector<std::string>{first, second});
  CHECK(pulls[1].source == other_source);
  CHECK(pulls[1].keys == std::vector<std::string>{third});
  auto hidden = hidden_slots(client);
  REQUIRE(hidden.size() == 1);
  CHECK(client.slots().at(hidden[0]).fragments == 2);

  // The first group's MIGRATE alone: the second waits for its reply.
  CHECK(client.requests_to(source) == 1);
  CHECK(client.bytes_to(source) == move.migrate_bytes(target, {first, second}));
  CHECK(client.requests_to(other_source) == 0);

  // The first source fails it (its connection stops): the second group goes all the same.
  client.connection(source).stop();
  CHECK_FALSE(client.pull_outcome().done);
  CHECK(client.requests_to(other_source) == 1);
  CHECK(client.bytes_to(other_source) == move.migrate_bytes(other_target, {third}));
  client.connection(other_source).stop();

  // Done, with the first failure's words: its group's first key, the two shards, the reply.
  const auto& outcome = client.pull_outcome();
  REQUIRE(outcome.done);
  const auto& map = move.worker.shard_map();
  CHECK(outcome.error.starts_with("TRYAGAIN"));
  CHECK(contains(outcome.error, "'" + first + "'"));
  CHECK(contains(outcome.error, "from shard '" + map.shard(source).name + "' to '" +
                                    map.shard(target).name + "'"));
  CHECK(contains(outcome.error, protocol::error_message(protocol::ClientError::ShuttingDown)));
  CHECK_FALSE(contains(outcome.error, "'" + third + "'"));

  // Round again, the request is answered with that error and not sent.
  std::string expected = "-" + outcome.error + "\r\n";
  CHECK(dispatch(client, {"MGET", first, third, second}) == Dispatched::Done);
  CHECK(client.replies == std::vector<std::string>{expected});
  CHECK(client.forwarded.empty());
  CHECK(client.opened_slots() == 0);
  CHECK(client.pull_outcome().error.empty());  // taken by the request it failed
}

TEST_CASE("a pull from a source that is down fails at once, and its request says why") {
  Moving move;
  FakeRequestContext client(move.worker);
  auto key = move.key(true);
  std::size_t source = move.old_owner(key), target = move.new_owner(key);
  client.mark_down(source, "connection refused");

  // No wait: nothing would wake the request, so it takes the failure now.
  CHECK(dispatch(client, {"SET", key, "v"}) == Dispatched::Done);
  REQUIRE(client.replies.size() == 1);
  const auto& reply = client.replies[0];
  CHECK(reply.starts_with("-TRYAGAIN"));
  CHECK(contains(reply, "'" + key + "'"));
  const auto& map = move.worker.shard_map();
  CHECK(contains(reply, map.shard(source).name));
  CHECK(contains(reply, map.shard(target).name));
  CHECK(contains(reply, "connection refused"));
  CHECK(client.forwarded.empty());  // the SET never ran
  CHECK(client.requests_to(target) == 0);
}

TEST_CASE("while the worker holds moves a pull waits with it, and goes when sent") {
  Moving move;
  move.worker.hold_moves(true);
  FakeRequestContext client(move.worker);
  auto key = move.key(true);
  std::size_t source = move.old_owner(key), target = move.new_owner(key);

  CHECK(dispatch(client, {"GET", key}) == Dispatched::AfterEarlierReplies);
  CHECK(client.requests_to(source) == 0);
  REQUIRE(move.worker.held.size() == 1);
  const auto& held = move.worker.held[0];
  CHECK(held.client == &client);
  CHECK(held.slot == hidden_slots(client).at(0));
  REQUIRE(held.groups.size() == 1);
  CHECK(held.groups[0].source == source);
  CHECK(held.groups[0].target == target);
  CHECK(held.groups[0].keys == std::vector<std::string>{key});

  // Released (Worker::release_moves): the held MIGRATE goes, into the same slot.
  move.worker.hold_moves(false);
  router::send_pull(client, held.slot, held.groups);
  CHECK(client.requests_to(source) == 1);
  CHECK(client.bytes_to(source) == move.migrate_bytes(target, {key}));
  CHECK_FALSE(client.pull_outcome().done);
  client.deliver(held.slot, 0, "+OK\r\n");
  CHECK(client.pull_outcome().done);
}

TEST_CASE("a switch of direction before the MIGRATE goes ends the pull as if nothing moved") {
  Moving move;
  FakeRequestContext client(move.worker);
  auto key = move.key(true);
  std::size_t source = move.old_owner(key);
  const auto& map = move.worker.shard_map();
  // Another MIGRATE restoring to the source is in flight: the gate holds this pull back.
  router::MigrationGate::Claim other{{"127.0.0.1:7999"}, {map.shard(source).address.text()}};
  auto& gate = move.worker.migrations();
  bool other_went = false;
  gate.enter(move.worker.io(), other, [&other_went] { other_went = true; });
  REQUIRE(other_went);

  dispatch(client, {"GET", key});
  CHECK(client.requests_to(source) == 0);
  move.worker.switch_direction();
  gate.leave(other);
  move.worker.io().poll();

  // Never sent; the pull ends without an error, and the request is planned again.
  CHECK(client.requests_to(source) == 0);
  CHECK(client.pull_outcome().done);
  CHECK(client.pull_outcome().error.empty());
}

TEST_CASE("a pull's outcome is its request's: an earlier pull's replies do not answer it") {
  Moving move;
  FakeRequestContext client(move.worker);
  auto key = move.key(true, "x");
  auto later_key = move.key(true, "y", move.old_owner(key), move.new_owner(key));

  client.state().requests_dispatched = 1;
  test::PlannedRequest earlier(client, {"GET", key});
  router::start_pull(client, earlier.plan());
  client.state().requests_dispatched = 2;
  test::PlannedRequest later(client, {"GET", later_key});
  router::start_pull(client, later.plan());
  auto hidden = hidden_slots(client);
  REQUIRE(hidden.size() == 2);

  // The earlier pull fails now: neither its failure nor its end is the later request's.
  client.deliver(hidden[0], 0, "-ERR IOERR error or timeout\r\n");
  const auto& outcome = client.pull_outcome();
  CHECK(outcome.request == 2);
  CHECK_FALSE(outcome.done);
  CHECK(outcome.error.empty());

  client.deliver(hidden[1], 0, "+OK\r\n");
  CHECK(outcome.answers(2, move.worker.topology().version));
  CHECK_FALSE(outcome.answers(1, move.worker.topology().version));
  CHECK(outcome.error.empty());
}

TEST_CASE("under another topology a pulled request is pulled again") {
  Moving move;
  FakeRequestContext client(move.worker);
  auto key = move.key(true);
  std::size_t source = move.old_owner(key);
  dispatch(client, {"GET", key});
  auto hidden = hidden_slots(client);
  REQUIRE(hidden.size() == 1);
  client.deliver(hidden[0], 0, "+OK\r\n");
  REQUIRE(client.pull_outcome().done);

  // The move turned round and back meanwhile (a new version, a new epoch): the done pull was
  // planned with the old one, so the key is pulled again before the request runs.
  auto four = topology_of(test::kFourShards, 1);
  move.worker.serve(router::moving_topology(*move.from, *four, 3, 2));
  CHECK(dispatch(client, {"GET", key}) == Dispatched::AfterEarlierReplies);
  CHECK(client.forwarded.empty());
  CHECK(client.requests_to(source) == 2);
  CHECK(hidden_slots(client).size() == 2);
  CHECK(client.pull_outcome().topology_version == 3);
}
