#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "router/merge/merge_brief.h"

using santral::protocol::Merge;
using santral::router::make_merge;
using santral::router::MergeBrief;
using namespace std::string_literals;

namespace {

MergeBrief brief_for(Merge kind, std::string command, std::vector<std::string> shards,
                     int protocol = 2) {
  MergeBrief brief;
  brief.kind = kind;
  brief.command = std::move(command);
  brief.fragment_names = std::move(shards);
  brief.protocol = protocol;
  return brief;
}

// Every order the replies could arrive in: all of them up to four fragments, else a few.
std::vector<std::vector<std::uint32_t>> delivery_orders(std::size_t fragments) {
  std::vector<std::uint32_t> order(fragments);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<std::uint32_t>> orders;
  if (fragments <= 4) {
    do orders.push_back(order);
    while (std::next_permutation(order.begin(), order.end()));
    return orders;
  }
  for (std::size_t shift = 0; shift < fragments; ++shift) {
    orders.push_back(order);
    std::rotate(order.begin(), order.begin() + 1, order.end());
  }
  std::reverse(order.begin(), order.end());
  orders.push_back(order);
  return orders;
}

// Runs the merge once per delivery order; the reply's bytes after add() are overwritten, as
// a read buffer would be. Returns what finish() appended.
std::string merge_once(const MergeBrief& brief, const std::vector<std::string>& replies,
                       const std::vector<std::uint32_t>& order) {
  auto merge = make_merge(brief);
  for (std::uint32_t fragment : order) {
    std::string buffer = replies[fragment];
    merge->add(fragment, buffer);
    std::fill(buffer.begin(), buffer.end(), 'x');
  }
  std::string out = "+earlier\r\n";
  merge->finish(out);
  REQUIRE(out.starts_with("+earlier\r\n"));
  return out.substr(10);
}

// The merged reply, which must not depend on the order the replies arrive in.
std::string merged(const MergeBrief& brief, const std::vector<std::string>& replies) {
  std::string first;
  bool have_first = false;
  for (const auto& order : delivery_orders(replies.size())) {
    std::string out = merge_once(brief, replies, order);
    if (!have_first) {
      first = std::move(out);
      have_first = true;
      continue;
    }
    INFO("delivery order starting with fragment " << order.front());
    REQUIRE(out == first);
  }
  return first;
}

const std::vector<std::string> kThree = {"a", "b", "c"};
const std::vector<std::string> kTwo = {"a", "b"};

}  // namespace

// ---- Sum -------------------------------------------------------------------------------

TEST_CASE("sum adds the shards' integers") {
  CHECK(merged(brief_for(Merge::Sum, "DEL", kThree), {":1\r\n", ":0\r\n", ":2\r\n"}) == ":3\r\n");
  CHECK(merged(brief_for(Merge::Sum, "DBSIZE", kThree, 3), {":10\r\n", ":-1\r\n", ":0\r\n"}) ==
        ":9\r\n");
  CHECK(merged(brief_for(Merge::Sum, "EXISTS", {"only"}), {":4\r\n"}) == ":4\r\n");
}

TEST_CASE("sum answers with the first shard's error") {
  const auto brief = brief_for(Merge::Sum, "DEL", kThree);
  CHECK(merged(brief, {":1\r\n", "-ERR from b\r\n", "-ERR from c\r\n"}) == "-ERR from b\r\n");
  CHECK(merged(brief, {":1\r\n", ":2\r\n", "-LOADING Redis is loading\r\n"}) ==
        "-LOADING Redis is loading\r\n");
  CHECK(merged(brief, {"-ERR from a\r\n", ":2\r\n", "-ERR from c\r\n"}) == "-ERR from a\r\n");
  const auto resp3 = brief_for(Merge::Sum, "DEL", kThree, 3);
  CHECK(merged(resp3, {":1\r\n", "!10\r\nERR from b\r\n", ":1\r\n"}) == "!10\r\nERR from b\r\n");
}

TEST_CASE("sum reports a reply that is not an integer") {
  const auto brief = brief_for(Merge::Sum, "DEL", kThree);
  CHECK(merged(brief, {":1\r\n", "+OK\r\n", "-ERR from c\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to DEL\r\n");
  CHECK(merged(brief, {":1\r\n", ":1\r\n", "not resp"}) ==
        "-ERR santral: shard 'c' sent an unexpected reply to DEL\r\n");
  CHECK(merged(brief, {":9223372036854775807\r\n", ":1\r\n", ":0\r\n"}) ==
        "-ERR santral: the shards' replies to DEL add up to more than a 64-bit integer holds\r\n");
}

// ---- AllOk -----------------------------------------------------------------------------

TEST_CASE("MSET answers OK only if every shard did") {
  const auto brief = brief_for(Merge::AllOk, "MSET", kThree);
  CHECK(merged(brief, {"+OK\r\n", "+OK\r\n", "+OK\r\n"}) == "+OK\r\n");
  CHECK(merged(brief_for(Merge::AllOk, "BGSAVE", kTwo, 3),
               {"+Background saving started\r\n", "+Background saving started\r\n"}) ==
        "+Background saving started\r\n");
}

TEST_CASE("MSET's error names every shard that failed") {
  const auto brief = brief_for(Merge::AllOk, "MSET", kThree);
  CHECK(merged(brief, {"+OK\r\n", "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
                       "-READONLY You can't write against a read only replica.\r\n"}) ==
        "-ERR santral: MSET failed on shard(s) 'b', 'c': OOM command not allowed when used "
        "memory > 'maxmemory'.\r\n");
  CHECK(merged(brief, {"-ERR santral: shard 'a' (10.0.0.1:6379) did not answer within 500 ms\r\n",
                       "+OK\r\n", "+OK\r\n"}) ==
        "-ERR santral: MSET failed on shard(s) 'a': ERR santral: shard 'a' (10.0.0.1:6379) did "
        "not answer within 500 ms\r\n");
  CHECK(merged(brief, {"+OK\r\n", "+OK\r\n", "$-1\r\n$"}) ==
        "-ERR santral: MSET failed on shard(s) 'c': ERR santral: shard 'c' sent an unexpected "
        "reply to MSET\r\n");
}

TEST_CASE("a RESP3 blob error is quoted on one line") {
  const auto brief = brief_for(Merge::AllOk, "FLUSHALL", kTwo, 3);
  CHECK(merged(brief, {"!12\r\nERR a\r\nb\nc d\r\n", "!5\r\nERR e\r\n"}) ==
        "-ERR santral: FLUSHALL failed on shard(s) 'a', 'b': ERR a  b c d\r\n");
}

// ---- Concat ----------------------------------------------------------------------------

TEST_CASE("concat joins lists in fragment order") {
  const auto brief = brief_for(Merge::Concat, "KEYS", kThree);
  CHECK(merged(brief, {"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*0\r\n", "*1\r\n$2\r\ncc\r\n"}) ==
        "*3\r\n$1\r\na\r\n$1\r\nb\r\n$2\r\ncc\r\n");
  CHECK(merged(brief, {"*0\r\n", "*0\r\n", "*0\r\n"}) == "*0\r\n");
  const auto resp3 = brief_for(Merge::Concat, "PUBSUB CHANNELS", kTwo, 3);
  CHECK(merged(resp3, {"~1\r\n$3\r\nch1\r\n", "~2\r\n$3\r\nch2\r\n$3\r\nch3\r\n"}) ==
        "~3\r\n$3\r\nch1\r\n$3\r\nch2\r\n$3\r\nch3\r\n");
}

TEST_CASE("concat keeps nested entries byte for byte") {
  const auto brief = brief_for(Merge::Concat, "SLOWLOG GET", kTwo, 3);
  const std::string entry_a =
      "*6\r\n:14\r\n:1309448221\r\n:15\r\n*2\r\n$4\r\nping\r\n$1\r\nx\r\n$15\r\n127.0.0.1:58217"
      "\r\n$0\r\n\r\n";
  const std::string entry_b =
      "*6\r\n:3\r\n:1309448128\r\n:30\r\n*1\r\n$4\r\nkeys\r\n_\r\n=8\r\ntxt:name\r\n";
  CHECK(merged(brief, {"*1\r\n" + entry_a, "*1\r\n" + entry_b}) == "*2\r\n" + entry_a + entry_b);
}

TEST_CASE("concat answers with the first error, or reports a reply that is not a list") {
  const auto brief = brief_for(Merge::Concat, "KEYS", kThree);
  CHECK(merged(brief, {"*0\r\n", "-ERR b\r\n", "-ERR c\r\n"}) == "-ERR b\r\n");
  CHECK(merged(brief, {"*0\r\n", ":1\r\n", "-ERR c\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to KEYS\r\n");
}

// ---- Same ------------------------------------------------------------------------------

TEST_CASE("same answers the shards' common reply") {
  const std::string sha = "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n";
  CHECK(merged(brief_for(Merge::Same, "SCRIPT LOAD", kThree), {sha, sha, sha}) == sha);
  CHECK(merged(brief_for(Merge::Same, "FUNCTION LOAD", kTwo, 3),
               {"$5\r\nmylib\r\n", "$5\r\nmylib\r\n"}) == "$5\r\nmylib\r\n");
}

TEST_CASE("same reports shards that answered differently") {
  const auto brief = brief_for(Merge::Same, "SCRIPT LOAD", kThree);
  CHECK(merged(brief, {"$3\r\nabc\r\n", "$3\r\nabc\r\n", "$3\r\nabd\r\n"}) ==
        "-ERR santral: shards answered SCRIPT LOAD differently (shard 'a': abc, shard 'c': "
        "abd)\r\n");
  const std::string long_text(100, 'z');
  CHECK(merged(brief, {"$3\r\nabc\r\n", "$100\r\n" + long_text + "\r\n", "+OK\r\n"}) ==
        "-ERR santral: shards answered SCRIPT LOAD differently (shard 'a': abc, shard 'b': " +
            std::string(40, 'z') + "..., shard 'c': OK)\r\n");
  const auto five = brief_for(Merge::Same, "FUNCTION DELETE", {"a", "b", "c", "d", "e"});
  CHECK(merged(five, {"+OK\r\n", ":1\r\n", ":2\r\n", "*0\r\n", "$-1\r\n"}) ==
        "-ERR santral: shards answered FUNCTION DELETE differently (shard 'a': OK, shard 'b': "
        "1, shard 'c': 2, shard 'd': 0 elements, and 1 more shard(s))\r\n");
}

TEST_CASE("the same error from every shard passes through as one Redis would send it") {
  const auto same = brief_for(Merge::Same, "FUNCTION LOAD", kThree);
  const std::string error = "-ERR Library name was not given\r\n";
  CHECK(merged(same, {error, error, error}) == error);
  const auto all_ok = brief_for(Merge::AllOk, "CONFIG SET", kTwo);
  const std::string unknown = "-ERR Unknown option or number of arguments for CONFIG SET - 'x'\r\n";
  CHECK(merged(all_ok, {unknown, unknown}) == unknown);
  // One shard answered otherwise: Santral's wrapper, naming the shards.
  CHECK(merged(same, {error, error, "-ERR other\r\n"}) ==
        "-ERR santral: FUNCTION LOAD failed on shard(s) 'a', 'b', 'c': ERR Library name was not "
        "given\r\n");
}

TEST_CASE("same reports shards that failed") {
  const auto brief = brief_for(Merge::Same, "FUNCTION LOAD", kThree);
  CHECK(merged(brief,
               {"$5\r\nmylib\r\n", "-ERR Library 'mylib' already exists\r\n", "$5\r\nother\r\n"}) ==
        "-ERR santral: FUNCTION LOAD failed on shard(s) 'b': ERR Library 'mylib' already "
        "exists\r\n");
}

// ---- AnyOk -----------------------------------------------------------------------------

TEST_CASE("SCRIPT KILL succeeds if any shard killed a script") {
  const auto brief = brief_for(Merge::AnyOk, "SCRIPT KILL", kThree);
  const std::string notbusy = "-NOTBUSY No scripts in execution right now.\r\n";
  CHECK(merged(brief, {notbusy, "+OK\r\n", notbusy}) == "+OK\r\n");
  CHECK(merged(brief, {notbusy, notbusy, notbusy}) == notbusy);
  CHECK(merged(brief, {"-ERR santral: shard 'a' is unavailable\r\n", notbusy, notbusy}) ==
        "-ERR santral: shard 'a' is unavailable\r\n");
  CHECK(merged(brief, {"garbage", notbusy, notbusy}) ==
        "-ERR santral: shard 'a' sent an unexpected reply to SCRIPT KILL\r\n");
  const auto resp3 = brief_for(Merge::AnyOk, "FUNCTION KILL", kTwo, 3);
  CHECK(merged(resp3, {"!7\r\nNOTBUSY\r\n", "!7\r\nNOTBUSY\r\n"}) == "!7\r\nNOTBUSY\r\n");
}

// ---- Random ----------------------------------------------------------------------------

TEST_CASE("RANDOMKEY picks among the shards that have a key") {
  const auto brief = brief_for(Merge::Random, "RANDOMKEY", {"a", "b", "c", "d"});
  const std::vector<std::string> replies = {"$-1\r\n", "$3\r\nfoo\r\n", "-ERR c\r\n",
                                            "$3\r\nbar\r\n"};
  std::set<std::string> seen;
  for (int round = 0; round < 10; ++round)
    for (const auto& order : delivery_orders(replies.size())) {
      const std::string out = merge_once(brief, replies, order);
      CHECK((out == "$3\r\nfoo\r\n" || out == "$3\r\nbar\r\n"));
      seen.insert(out);
    }
  CHECK(seen.size() == 2);  // 240 tries: each key is missed with chance 2^-240
}

TEST_CASE("RANDOMKEY without keys answers nil, or the first error") {
  CHECK(merged(brief_for(Merge::Random, "RANDOMKEY", kThree), {"$-1\r\n", "$-1\r\n", "$-1\r\n"}) ==
        "$-1\r\n");
  CHECK(merged(brief_for(Merge::Random, "RANDOMKEY", kTwo, 3), {"_\r\n", "_\r\n"}) == "_\r\n");
  CHECK(merged(brief_for(Merge::Random, "RANDOMKEY", kThree),
               {"$-1\r\n", "-ERR b\r\n", "-ERR c\r\n"}) == "-ERR b\r\n");
  CHECK(merged(brief_for(Merge::Random, "RANDOMKEY", kThree), {"$-1\r\n", "$-1\r\n", ":1\r\n"}) ==
        "-ERR santral: shard 'c' sent an unexpected reply to RANDOMKEY\r\n");
  CHECK(merged(brief_for(Merge::Random, "RANDOMKEY", kThree),
               {"$-1\r\n", "$1\r\nk\r\n", "-ERR c\r\n"}) == "$1\r\nk\r\n");
}

// ---- SumPerName ------------------------------------------------------------------------

TEST_CASE("PUBSUB NUMSUB adds the counts per channel") {
  const auto brief = brief_for(Merge::SumPerName, "PUBSUB NUMSUB", kThree);
  CHECK(merged(brief, {"*4\r\n$2\r\nch\r\n:1\r\n$3\r\nch2\r\n:0\r\n",
                       "*4\r\n$2\r\nch\r\n:2\r\n$3\r\nch2\r\n:5\r\n",
                       "*4\r\n$2\r\nch\r\n:0\r\n$3\r\nch2\r\n:1\r\n"}) ==
        "*4\r\n$2\r\nch\r\n:3\r\n$3\r\nch2\r\n:6\r\n");
  CHECK(merged(brief, {"*0\r\n", "*0\r\n", "*0\r\n"}) == "*0\r\n");
}

TEST_CASE("PUBSUB NUMSUB keeps fragment 0's order, then adds names it lacked") {
  const auto brief = brief_for(Merge::SumPerName, "PUBSUB SHARDNUMSUB", kThree);
  CHECK(merged(brief, {"*2\r\n$1\r\nb\r\n:1\r\n", "*4\r\n$1\r\nz\r\n:4\r\n$1\r\nb\r\n:1\r\n",
                       "*4\r\n$1\r\ny\r\n:1\r\n$1\r\nz\r\n:1\r\n"}) ==
        "*6\r\n$1\r\nb\r\n:2\r\n$1\r\nz\r\n:5\r\n$1\r\ny\r\n:1\r\n");
}

TEST_CASE("PUBSUB NUMSUB keeps a channel asked for twice twice") {
  const auto brief = brief_for(Merge::SumPerName, "PUBSUB NUMSUB", kTwo);
  CHECK(merged(brief, {"*4\r\n$1\r\nc\r\n:1\r\n$1\r\nc\r\n:1\r\n",
                       "*4\r\n$1\r\nc\r\n:2\r\n$1\r\nc\r\n:2\r\n"}) ==
        "*4\r\n$1\r\nc\r\n:3\r\n$1\r\nc\r\n:3\r\n");
}

TEST_CASE("PUBSUB NUMSUB answers a RESP3 map as a map") {
  const auto brief = brief_for(Merge::SumPerName, "PUBSUB NUMSUB", kTwo, 3);
  CHECK(merged(brief, {"%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:0\r\n",
                       "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:7\r\n"}) ==
        "%2\r\n$1\r\na\r\n:2\r\n$1\r\nb\r\n:7\r\n");
}

TEST_CASE("PUBSUB NUMSUB reports errors and replies of the wrong shape") {
  const auto brief = brief_for(Merge::SumPerName, "PUBSUB NUMSUB", kThree);
  CHECK(merged(brief, {"*0\r\n", "-ERR b\r\n", "-ERR c\r\n"}) == "-ERR b\r\n");
  CHECK(merged(brief, {"*0\r\n", "*1\r\n$1\r\na\r\n", "-ERR c\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to PUBSUB NUMSUB\r\n");
  CHECK(merged(brief, {"*2\r\n:1\r\n:1\r\n", "*0\r\n", "*0\r\n"}) ==
        "-ERR santral: shard 'a' sent an unexpected reply to PUBSUB NUMSUB\r\n");
}

// ---- Ordered ---------------------------------------------------------------------------

TEST_CASE("MGET puts values back in the caller's key order") {
  // MGET k0 k1 k2 k3 k4: k0, k2 on a; k1, k4 on b; k3 on c.
  auto brief = brief_for(Merge::Ordered, "MGET", kThree);
  brief.positions = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}};
  CHECK(merged(brief, {"*2\r\n$2\r\nv0\r\n$-1\r\n", "*2\r\n$2\r\nv1\r\n$0\r\n\r\n",
                       "*1\r\n$2\r\nv3\r\n"}) ==
        "*5\r\n$2\r\nv0\r\n$2\r\nv1\r\n$-1\r\n$2\r\nv3\r\n$0\r\n\r\n");

  auto resp3 = brief;
  resp3.protocol = 3;
  CHECK(merged(resp3,
               {"*2\r\n$2\r\nv0\r\n_\r\n", "*2\r\n_\r\n$3\r\n\r\n\0\r\n"s, "*1\r\n$2\r\nv3\r\n"}) ==
        "*5\r\n$2\r\nv0\r\n_\r\n_\r\n$2\r\nv3\r\n$3\r\n\r\n\0\r\n"s);
}

TEST_CASE("MGET answers with the lowest-numbered shard's error") {
  auto brief = brief_for(Merge::Ordered, "MGET", kThree);
  brief.positions = {{0, 0}, {1, 0}, {2, 0}};
  const std::string unavailable =
      "-ERR santral: shard 'b' (10.0.0.2:6379) is unavailable: connection refused\r\n";
  CHECK(merged(brief, {"*1\r\n$1\r\na\r\n", unavailable, "-ERR c\r\n"}) == unavailable);
  CHECK(merged(brief, {"*1\r\n$1\r\na\r\n", "*1\r\n$1\r\nb\r\n", "-ERR c\r\n"}) == "-ERR c\r\n");
  CHECK(merged(brief, {"+OK\r\n", unavailable, "-ERR c\r\n"}) ==
        "-ERR santral: shard 'a' sent an unexpected reply to MGET\r\n");
}

TEST_CASE("MGET reports a shard that answered too few values") {
  auto brief = brief_for(Merge::Ordered, "MGET", kThree);
  brief.positions = {{0, 0}, {1, 0}, {1, 1}, {2, 0}};
  CHECK(merged(brief, {"*1\r\n$1\r\na\r\n", "*1\r\n$1\r\nb\r\n", "*0\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to MGET\r\n");
  brief.positions.push_back({3, 0});
  CHECK(merged(brief, {"*1\r\n$1\r\na\r\n", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n", "*1\r\n$1\r\nd\r\n"}) ==
        "-ERR santral: internal error while merging the replies to MGET\r\n");
}

TEST_CASE("MGET of many keys") {
  constexpr std::uint32_t kKeys = 10000;
  constexpr std::uint32_t kShards = 4;
  auto brief = brief_for(Merge::Ordered, "MGET", {"a", "b", "c", "d"});
  std::vector<std::string> replies(kShards);
  std::vector<std::uint32_t> count(kShards, 0);
  std::string expected = "*" + std::to_string(kKeys) + "\r\n";
  std::vector<std::string> bodies(kShards);
  for (std::uint32_t key = 0; key < kKeys; ++key) {
    const std::uint32_t shard = (key * 7 + key / 3) % kShards;
    brief.positions.emplace_back(shard, count[shard]++);
    const std::string value = key % 5 == 0 ? "$-1\r\n"
                                           : "$" + std::to_string(std::to_string(key).size()) +
                                                 "\r\n" + std::to_string(key) + "\r\n";
    bodies[shard] += value;
    expected += value;
  }
  for (std::uint32_t shard = 0; shard < kShards; ++shard)
    replies[shard] = "*" + std::to_string(count[shard]) + "\r\n" + bodies[shard];
  CHECK(merged(brief, replies) == expected);
}

// ---- Scan ------------------------------------------------------------------------------

TEST_CASE("SCAN's cursor names the shard to continue on") {
  auto brief = brief_for(Merge::Scan, "SCAN", {"b"});
  brief.scan_shard = 1;
  brief.scan_shards = 3;
  const std::string keys = "*2\r\n$1\r\nx\r\n$2\r\ny\0\r\n"s;
  CHECK(merged(brief, {"*2\r\n$2\r\n17\r\n" + keys}) == "*2\r\n$5\r\n17409\r\n" + keys);
  CHECK(merged(brief, {"*2\r\n$1\r\n0\r\n" + keys}) == "*2\r\n$1\r\n2\r\n" + keys);
  CHECK(merged(brief, {"*2\r\n$1\r\n0\r\n*0\r\n"}) == "*2\r\n$1\r\n2\r\n*0\r\n");
  brief.scan_shard = 2;
  CHECK(merged(brief, {"*2\r\n$1\r\n0\r\n" + keys}) == "*2\r\n$1\r\n0\r\n" + keys);
  brief.protocol = 3;
  CHECK(merged(brief, {"*2\r\n$1\r\n5\r\n*1\r\n$1\r\nk\r\n"}) ==
        "*2\r\n$4\r\n5122\r\n*1\r\n$1\r\nk\r\n");
}

TEST_CASE("SCAN passes errors through and reports what it cannot read") {
  auto brief = brief_for(Merge::Scan, "SCAN", {"b"});
  brief.scan_shard = 1;
  brief.scan_shards = 3;
  CHECK(merged(brief, {"-ERR invalid cursor\r\n"}) == "-ERR invalid cursor\r\n");
  CHECK(merged(brief, {"*2\r\n$3\r\nabc\r\n*0\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to SCAN\r\n");
  CHECK(merged(brief, {"*1\r\n$1\r\n0\r\n"}) ==
        "-ERR santral: shard 'b' sent an unexpected reply to SCAN\r\n");
  CHECK(merged(brief, {"*2\r\n$17\r\n18014398509481984\r\n*0\r\n"}) ==
        "-ERR santral: shard 'b' returned the SCAN cursor 18014398509481984, too large to "
        "combine with a shard number (Santral needs shard cursors below 2^54); scan that shard "
        "directly\r\n");
}

TEST_CASE("a reply nested deeper than the stack allows is merged") {
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  CHECK(merged(brief_for(Merge::Concat, "SLOWLOG GET", kTwo), {"*1\r\n" + deep, "*0\r\n"}) ==
        "*1\r\n" + deep);
}

// ---- Missing and unexpected fragments ----------------------------------------------------

TEST_CASE("a fragment that never arrived is reported, not waited for") {
  auto merge = make_merge(brief_for(Merge::Sum, "DEL", kTwo));
  merge->add(1, ":1\r\n");
  merge->add(7, ":100\r\n");  // no such fragment: ignored
  std::string out;
  merge->finish(out);
  CHECK(out == "-ERR santral: shard 'a' did not answer DEL\r\n");
}

TEST_CASE("a brief without a merge rule answers with an error") {
  CHECK(merged(brief_for(Merge::None, "GET", kTwo), {"+OK\r\n", "+OK\r\n"}) ==
        "-ERR santral: GET has no rule to merge the replies of several shards\r\n");
  CHECK(merged(brief_for(Merge::Sum, "DEL", {}), {}) ==
        "-ERR santral: DEL was sent to no shard\r\n");
}
