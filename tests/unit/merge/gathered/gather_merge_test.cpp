#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "protocol/command_table.h"
#include "router/merge/gathered/gather_merge.h"

using namespace santral::router;

namespace {

GatherBrief brief_for(const std::string& command, std::vector<std::string> args,
                      std::size_t fragments, int protocol = 2, std::size_t max_bytes = 1 << 20) {
  GatherBrief brief;
  brief.rule = gather_rule(*santral::protocol::find_command(command));
  REQUIRE(brief.rule != nullptr);
  brief.command = santral::protocol::upper_name(*santral::protocol::find_command(command));
  brief.args = std::move(args);
  for (std::size_t f = 0; f < fragments / brief.rule->fetch.size(); ++f)
    brief.key_positions.push_back(static_cast<std::uint32_t>(f + 1));
  for (std::size_t f = 0; f < fragments; ++f)
    brief.fragment_names.push_back("s" + std::to_string(f));
  brief.protocol = protocol;
  brief.max_bytes = max_bytes;
  return brief;
}

// Delivers the replies in the given order and returns the client's answer.
std::string answer(GatherBrief brief, const std::vector<std::string>& replies,
                   const std::vector<std::uint32_t>& order) {
  auto merge = make_gather_merge(std::move(brief));
  for (auto f : order) merge->add(f, replies[f]);
  std::string out;
  merge->finish(out);
  return out;
}

std::vector<std::uint32_t> in_order(std::size_t n) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

}  // namespace

TEST_CASE("a gathered SUNION is the same whatever order the shards answer in") {
  std::vector<std::string> replies = {"*2\r\n$1\r\n3\r\n$1\r\n1\r\n", "*1\r\n$1\r\n2\r\n",
                                      "*0\r\n"};
  auto order = in_order(3);
  do {
    CHECK(answer(brief_for("sunion", {"SUNION", "a", "b", "c"}, 3), replies, order) ==
          "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
  } while (std::next_permutation(order.begin(), order.end()));
  // RESP3: a set.
  CHECK(answer(brief_for("sunion", {"SUNION", "a", "b", "c"}, 3, 3), replies, in_order(3))
            .starts_with("~3\r\n"));
}

TEST_CASE("a gathered ZUNION reads sorted sets and plain sets, WRONGTYPE where both fail") {
  const std::string wrong =
      "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  // key a: a zset; key b: a plain set.
  std::vector<std::string> replies = {"*4\r\n$1\r\nx\r\n$3\r\n1.5\r\n$1\r\ny\r\n$3\r\ninf\r\n",
                                      wrong, wrong, "*1\r\n$1\r\nx\r\n"};
  auto brief = brief_for("zunion", {"ZUNION", "2", "a", "b", "WITHSCORES"}, 4);
  brief.key_positions = {2, 3};
  CHECK(answer(brief, replies, {3, 1, 0, 2}) ==
        "*4\r\n$1\r\nx\r\n$3\r\n2.5\r\n$1\r\ny\r\n$3\r\ninf\r\n");
  brief.protocol = 3;
  CHECK(answer(brief, replies, in_order(4)) ==
        "*2\r\n*2\r\n$1\r\nx\r\n,2.5\r\n*2\r\n$1\r\ny\r\n,inf\r\n");
  replies[3] = wrong;  // b holds neither
  brief.protocol = 2;
  CHECK(answer(brief, replies, in_order(4)) == wrong);
}

TEST_CASE("a shard's own failure is the answer; a merge over the bound is refused") {
  std::vector<std::string> replies = {"*1\r\n$1\r\n1\r\n", "-ERR santral: shard 's1' is down\r\n"};
  CHECK(answer(brief_for("sinter", {"SINTER", "a", "b"}, 2), replies, {1, 0}) == replies[1]);
  std::vector<std::string> big = {"*1\r\n$100\r\n" + std::string(100, 'x') + "\r\n", "*0\r\n"};
  auto refused = answer(brief_for("sunion", {"SUNION", "a", "b"}, 2, 2, 64), big, {0, 1});
  CHECK(refused.starts_with("-ERR santral: SUNION reads keys from several shards"));
  CHECK(refused.find("limits.max_merge_bytes (64 bytes)") != std::string::npos);
}

TEST_CASE("gathered PFCOUNT and LCS errors in Redis's words") {
  const std::string wrong =
      "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
  CHECK(answer(brief_for("pfcount", {"PFCOUNT", "a", "b"}, 2), {"$-1\r\n", "$3\r\nabc\r\n"},
               {0, 1}) == "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n");
  CHECK(answer(brief_for("pfcount", {"PFCOUNT", "a", "b"}, 2), {"$-1\r\n", "$-1\r\n"}, {0, 1}) ==
        ":0\r\n");
  CHECK(answer(brief_for("lcs", {"LCS", "a", "b", "FOO"}, 2), {wrong, "$-1\r\n"}, {0, 1}) ==
        "-ERR The specified keys must contain string values\r\n");
  CHECK(answer(brief_for("lcs", {"LCS", "a", "b", "LEN", "IDX"}, 2),
               {"$8\r\nohmytext\r\n", "$9\r\nmynewtext\r\n"},
               {1, 0}) == "-ERR If you want both the length and indexes, please just use IDX.\r\n");
  CHECK(answer(brief_for("lcs", {"LCS", "a", "b"}, 2),
               {"$8\r\nohmytext\r\n", "$9\r\nmynewtext\r\n"}, {1, 0}) == "$6\r\nmytext\r\n");
}

TEST_CASE("the rules are found by the command table's columns") {
  using santral::protocol::find_command;
  const GatherRule* sinter = gather_rule(*find_command("sinter"));
  REQUIRE(sinter != nullptr);
  CHECK(sinter->algorithm == GatherAlgorithm::SetInter);
  CHECK(fetch_text(sinter->fetch[0], "k") == "SMEMBERS k");
  CHECK(gather_rule(*find_command("zinter"))->fetch.size() == 2);
  CHECK(gather_rule(*find_command("get")) == nullptr);
  CHECK(gather_rule(*find_command("sinterstore")) == nullptr);
  // Each store reads as the read it is named after: ZUNIONSTORE as ZUNION.
  for (std::string_view store :
       {"sinterstore", "sunionstore", "sdiffstore", "zunionstore", "zinterstore", "zdiffstore"}) {
    INFO(store);
    const WriteRule* rule = cross_shard_write_rule(*find_command(store));
    REQUIRE(rule != nullptr);
    CHECK(rule->kind == StagedWriteKind::Store);
    auto read = store.substr(0, store.size() - std::string_view("store").size());
    CHECK(&stored_read(*rule) == gather_rule(*find_command(read)));
  }
  CHECK(cross_shard_write_rule(*find_command("renamenx"))->nx);
  CHECK_FALSE(cross_shard_write_rule(*find_command("rename"))->nx);
  CHECK(cross_shard_write_rule(*find_command("rpoplpush"))->kind == StagedWriteKind::ListMove);
  CHECK(cross_shard_write_rule(*find_command("sinter")) == nullptr);
}
