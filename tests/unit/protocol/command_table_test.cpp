#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "protocol/command_table.h"

using namespace santral::protocol;

TEST_CASE("lookup ignores case and knows subcommands") {
  const CommandSpec* get = find_command("gEt");
  REQUIRE(get != nullptr);
  CHECK(get->name == "get");
  CHECK(get->routing == Routing::Keyed);
  CHECK(get->arity == 2);
  CHECK(get->has(kReadonly));
  CHECK(find_command("nosuchcommand") == nullptr);
  CHECK(find_command(std::string(200, 'x')) == nullptr);

  const CommandSpec* client = find_command("CLIENT");
  REQUIRE(client != nullptr);
  CHECK(client->routing == Routing::Container);
  const CommandSpec* setname = find_subcommand(*client, "SetName");
  REQUIRE(setname != nullptr);
  CHECK(setname->name == "client|setname");
  CHECK(setname->routing == Routing::Local);
  CHECK(find_subcommand(*client, "nope") == nullptr);
}

TEST_CASE("arity follows Redis: N exact, -N at least N") {
  const CommandSpec* get = find_command("get");
  CHECK(get->arity_ok(2));
  CHECK_FALSE(get->arity_ok(1));
  CHECK_FALSE(get->arity_ok(3));
  const CommandSpec* del = find_command("del");
  CHECK(del->arity_ok(2));
  CHECK(del->arity_ok(9));
  CHECK_FALSE(del->arity_ok(1));
}

TEST_CASE("every rule is complete") {
  std::set<std::string_view> names;
  auto check = [&](const CommandSpec& spec) {
    INFO(spec.name);
    CHECK(names.insert(spec.name).second);
    // A verb only where there is pinned state; a timeout answer exactly where a call can block.
    CHECK((spec.routing == Routing::Stateful) == (spec.verb != StatefulVerb::None));
    bool blocks = spec.has(kBlocking) || spec.stateful == StatefulKind::Blocking;
    CHECK(blocks == (spec.timeout != TimeoutReply::None));
    switch (spec.routing) {
      case Routing::Refused:
        CHECK_FALSE(spec.reason.empty());
        break;
      case Routing::Split:
      case Routing::Broadcast:
        CHECK(spec.merge != Merge::None);
        break;
      case Routing::Local:
        CHECK(spec.local != LocalHandler::None);
        break;
      case Routing::Stateful:
        CHECK(spec.stateful != StatefulKind::None);
        break;
      case Routing::Keyed:
        CHECK_FALSE(spec.key_specs.empty());
        break;
      case Routing::Container:
        CHECK_FALSE(spec.subcommands.empty());
        break;
      case Routing::Any:
      case Routing::Channel:
        break;
    }
  };
  for (const CommandSpec& spec : all_commands()) {
    check(spec);
    for (const CommandSpec& sub : spec.subcommands) check(sub);
  }
  CHECK(names.size() > 300);
}

TEST_CASE("stateful commands carry their verb and blocking ones their timeout answer") {
  struct Expected {
    std::string_view name;
    StatefulKind kind;
    StatefulVerb verb;
    TimeoutReply timeout;
  };
  const Expected expected[] = {
      {"multi", StatefulKind::Transaction, StatefulVerb::Multi, TimeoutReply::None},
      {"exec", StatefulKind::Transaction, StatefulVerb::Exec, TimeoutReply::None},
      {"discard", StatefulKind::Transaction, StatefulVerb::Discard, TimeoutReply::None},
      {"watch", StatefulKind::Transaction, StatefulVerb::Watch, TimeoutReply::None},
      {"unwatch", StatefulKind::Transaction, StatefulVerb::Unwatch, TimeoutReply::None},
      {"subscribe", StatefulKind::Subscribe, StatefulVerb::Subscribe, TimeoutReply::None},
      {"ssubscribe", StatefulKind::Subscribe, StatefulVerb::ShardSubscribe, TimeoutReply::None},
      {"psubscribe", StatefulKind::Subscribe, StatefulVerb::PatternSubscribe, TimeoutReply::None},
      {"unsubscribe", StatefulKind::Subscribe, StatefulVerb::Unsubscribe, TimeoutReply::None},
      {"sunsubscribe", StatefulKind::Subscribe, StatefulVerb::ShardUnsubscribe, TimeoutReply::None},
      {"punsubscribe", StatefulKind::Subscribe, StatefulVerb::PatternUnsubscribe,
       TimeoutReply::None},
      {"wait", StatefulKind::Blocking, StatefulVerb::Wait, TimeoutReply::Zero},
      {"blpop", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"brpop", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"blmpop", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"bzpopmin", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"bzpopmax", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"bzmpop", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilArray},
      {"blmove", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilBulk},
      {"brpoplpush", StatefulKind::Blocking, StatefulVerb::Block, TimeoutReply::NilBulk},
      // Keyed, blocking only with BLOCK: no verb, but an answer for a timeout.
      {"xread", StatefulKind::None, StatefulVerb::None, TimeoutReply::NilArray},
      {"xreadgroup", StatefulKind::None, StatefulVerb::None, TimeoutReply::NilArray},
      {"get", StatefulKind::None, StatefulVerb::None, TimeoutReply::None},
      {"publish", StatefulKind::None, StatefulVerb::None, TimeoutReply::None},
  };
  std::size_t stateful = 0;
  for (const auto& e : expected) {
    INFO(e.name);
    const CommandSpec* spec = find_command(e.name);
    REQUIRE(spec != nullptr);
    CHECK(spec->stateful == e.kind);
    CHECK(spec->verb == e.verb);
    CHECK(spec->timeout == e.timeout);
    if (e.kind != StatefulKind::None) ++stateful;
  }
  // The list above is every stateful command there is.
  std::size_t in_table = 0;
  for (const CommandSpec& spec : all_commands()) {
    if (spec.routing == Routing::Stateful) ++in_table;
    for (const CommandSpec& sub : spec.subcommands)
      if (sub.routing == Routing::Stateful) ++in_table;
  }
  CHECK(in_table == stateful);
}

TEST_CASE("the features' columns: gather= on reads, cross-write= on writes, salted= on counters") {
  std::size_t gathered = 0, written = 0, salted = 0;
  for (const CommandSpec& spec : all_commands()) {
    INFO(spec.name);
    if (spec.gather != GatherAlgorithm::None) {
      ++gathered;
      CHECK(spec.has(kReadonly));
      CHECK(spec.routing == Routing::Keyed);
    }
    if (spec.cross_write != CrossShardWrite::None) {
      ++written;
      CHECK(spec.has(kWrite));
      CHECK(spec.routing == Routing::Keyed);
    }
    if (spec.salted != SaltedOperation::None) ++salted;
    for (const CommandSpec& sub : spec.subcommands) {
      CHECK(sub.gather == GatherAlgorithm::None);
      CHECK(sub.cross_write == CrossShardWrite::None);
      CHECK(sub.salted == SaltedOperation::None);
    }
  }
  CHECK(gathered == 10);
  CHECK(written == 12);
  CHECK(salted == 24);
  CHECK(find_command("sintercard")->gather == GatherAlgorithm::SetInterCard);
  CHECK(find_command("pfcount")->gather == GatherAlgorithm::PfCount);
  CHECK(find_command("zunionstore")->cross_write == CrossShardWrite::StoreZUnion);
  CHECK(find_command("rpoplpush")->cross_write == CrossShardWrite::ListMove);
  CHECK(find_command("renamenx")->cross_write == CrossShardWrite::RenameNx);
  CHECK(find_command("decrby")->salted == SaltedOperation::Increment);
  CHECK(find_command("unlink")->salted == SaltedOperation::CountKeys);
  CHECK(find_command("hgetall")->salted == SaltedOperation::HashGetAll);
  CHECK(find_command("append")->salted == SaltedOperation::None);
  CHECK(find_command("sinterstore")->gather == GatherAlgorithm::None);
}
