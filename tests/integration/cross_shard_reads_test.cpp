// Read-only multi-key commands whose keys live on different shards are answered by Santral,
// which reads each key from its shard and computes the answer itself. Every answer is checked
// against one redis-server that holds all the same keys: byte for byte, in RESP2 and RESP3, for
// results, errors, scores and orders. Only where Redis's own order is its hash table's (a set
// result that is not an intset) are the members compared as sets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "tests/support/cluster.h"
#include "tests/support/redis_client.h"

using namespace santral::test;

namespace {

// A client that returns each reply exactly as the server sent it.
class RawResp {
 public:
  explicit RawResp(int port) : connection_(port) {}

  std::string call(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string bytes;
    santral::protocol::RespWriter(bytes).command(views);
    connection_.send(bytes);
    return read_reply();
  }

  std::string read_reply() {
    for (;;) {
      santral::protocol::ReplyScanner scanner;
      std::size_t size = 0;
      if (!buffer_.empty()) {
        auto status = scanner.scan(buffer_, size);
        REQUIRE(status != santral::protocol::ScanStatus::Error);
        if (status == santral::protocol::ScanStatus::Complete) {
          std::string reply = buffer_.substr(0, size);
          buffer_.erase(0, size);
          return reply;
        }
      }
      std::string more = connection_.read_some(1, 10000);
      REQUIRE(!more.empty());
      buffer_ += more;
    }
  }

 private:
  RawConnection connection_;
  std::string buffer_;
};

// The elements of a flat array or set reply, sorted; nullopt for any other reply.
std::optional<std::vector<std::string>> sorted_members(const std::string& reply) {
  santral::protocol::ReplyValue value;
  if (!santral::protocol::parse_reply(reply, value)) return std::nullopt;
  using Type = santral::protocol::ReplyValue::Type;
  if (value.type != Type::Array && value.type != Type::Set) return std::nullopt;
  std::vector<std::string> members;
  for (const auto& element : value.elements) members.emplace_back(element.text);
  std::sort(members.begin(), members.end());
  return members;
}

bool all_small_integers(const std::vector<std::string>& members) {
  if (members.size() > 512) return false;
  for (const auto& m : members) {
    if (m.empty() || m.size() > 20) return false;
    std::size_t start = m[0] == '-' ? 1 : 0;
    if (start == m.size() || (m[start] == '0' && m.size() > start + 1)) return false;
    if (!std::all_of(m.begin() + static_cast<std::ptrdiff_t>(start), m.end(),
                     [](char c) { return c >= '0' && c <= '9'; }))
      return false;
  }
  return true;
}

std::string text_of(const std::vector<std::string>& command) {
  std::string text;
  for (const auto& arg : command) text += (text.empty() ? "" : " ") + arg.substr(0, 40);
  return text;
}

struct Tally {
  int exact = 0;
  int as_sets = 0;  // Redis's order is unspecified there: same members
};

// The keys of the comparison, each placed by its name on a shard of the cluster.
struct Keys {
  std::vector<std::string> sets, zsets, hlls, strings, others, missing;
};

// Runs `setup` on both the reference server and through Santral.
void both(RedisClient& reference, RedisClient& santral, const std::vector<std::string>& command) {
  auto expected = reference.command(command);
  auto got = santral.command(command);
  REQUIRE(expected.type == got.type);
}

std::string key_on(Cluster& cluster, std::size_t shard, const std::string& name) {
  return cluster.key_on(shard, name + ":");
}

Keys load(Cluster& cluster, RedisClient& reference, RedisClient& santral) {
  Keys keys;
  std::mt19937 random(7);
  auto shard = [&](std::size_t i) { return i % cluster.size(); };
  std::size_t n = 0;
  auto add_set = [&](const std::string& name, const std::vector<std::string>& members) {
    std::string key = key_on(cluster, shard(n++), name);
    std::vector<std::string> command = {"SADD", key};
    command.insert(command.end(), members.begin(), members.end());
    both(reference, santral, command);
    keys.sets.push_back(key);
  };
  auto range = [](int from, int to, int step = 1) {
    std::vector<std::string> out;
    for (int i = from; i <= to; i += step) out.push_back(std::to_string(i));
    return out;
  };
  add_set("ints", {"5", "3", "1", "2", "8", "-7"});
  add_set("ints2", {"2", "3", "4", "5", "100", "-7", "1"});
  add_set("ints3", {"3", "5", "7", "9", "-7"});
  add_set("mixed", {"a", "b", "c", "1", "2", "3"});
  add_set("words", {"b", "c", "d", "apple", "", "3"});
  add_set("big", range(0, 1200, 2));   // 601 integers: a hash table
  add_set("big2", range(0, 1200, 3));  // 401: an intset
  add_set("noncanon", {"01", "1", "+2", "2", " 3"});
  add_set("onlyone", {"1"});

  auto add_zset = [&](const std::string& name,
                      const std::vector<std::pair<std::string, std::string>> pairs) {
    std::string key = key_on(cluster, shard(n++), name);
    std::vector<std::string> command = {"ZADD", key};
    for (const auto& [score, member] : pairs) {
      command.push_back(score);
      command.push_back(member);
    }
    both(reference, santral, command);
    keys.zsets.push_back(key);
  };
  add_zset("z1", {{"1", "a"}, {"2", "b"}, {"3", "c"}, {"0.1", "d"}, {"-5", "e"}, {"1", "3"}});
  add_zset("z2", {{"10", "a"}, {"0.2", "b"}, {"inf", "c"}, {"-inf", "x"}, {"1e300", "y"}});
  add_zset("z3", {{"-inf", "c"}, {"inf", "a"}, {"3.14159", "b"}, {"2", "5"}, {"0", "z"}});
  add_zset("ties", {{"1", "b"}, {"1", "a"}, {"1", "c"}, {"1", "ab"}, {"1", ""}});
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 300; ++i)
    many.emplace_back(std::to_string(std::uniform_real_distribution<>(-100, 100)(random)),
                      "m" + std::to_string(i % 150 * 7));
  add_zset("many", many);

  auto add_hll = [&](const std::string& name, int count, int offset) {
    std::string key = key_on(cluster, shard(n++), name);
    for (int i = 0; i < count; i += 1000) {
      std::vector<std::string> command = {"PFADD", key};
      for (int j = i; j < std::min(count, i + 1000); ++j)
        command.push_back("e" + std::to_string(j + offset));
      both(reference, santral, command);
    }
    keys.hlls.push_back(key);
  };
  add_hll("hll-small", 20, 0);
  add_hll("hll-sparse", 600, 10);
  add_hll("hll-dense", 20000, 500);
  add_hll("hll-dense2", 50000, 15000);

  auto add_string = [&](const std::string& name, const std::string& value) {
    std::string key = key_on(cluster, shard(n++), name);
    both(reference, santral, {"SET", key, value});
    keys.strings.push_back(key);
  };
  add_string("s1", "ohmytext");
  add_string("s2", "mynewtext");
  add_string("s3", "");
  add_string("s4", "aaaaaaaabbbbbbbbaaaaaaaa");
  add_string("s5", "abababababbbbbaaaaaaabab");
  std::string r1, r2;
  for (int i = 0; i < 300; ++i) r1 += static_cast<char>('a' + random() % 4);
  for (int i = 0; i < 260; ++i) r2 += static_cast<char>('a' + random() % 4);
  add_string("r1", r1);
  add_string("r2", r2);
  add_string("notanhll", "HYLL is not enough here");
  add_string("int", "1234567890123456");
  // A sparse HLL whose opcodes do not cover every register: Redis calls it corrupted.
  std::string corrupt("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x10", 17);
  add_string("corrupt", corrupt);

  std::string list = key_on(cluster, shard(n++), "list");
  both(reference, santral, {"RPUSH", list, "a", "b"});
  keys.others.push_back(list);
  std::string hash = key_on(cluster, shard(n++), "hash");
  both(reference, santral, {"HSET", hash, "f", "v"});
  keys.others.push_back(hash);
  for (int i = 0; i < 2; ++i) keys.missing.push_back(key_on(cluster, shard(n++), "missing"));
  return keys;
}

// Every command of the comparison, in RESP2 and RESP3 alike.
std::vector<std::vector<std::string>> commands(const Keys& k) {
  std::vector<std::vector<std::string>> out;
  const auto& s = k.sets;
  const auto& z = k.zsets;
  std::vector<std::string> wrong = {k.strings[0], k.others[0]};
  // Sets: every pair and some triples, with missing keys and wrong types among them.
  std::vector<std::string> set_inputs = s;
  set_inputs.push_back(k.missing[0]);
  for (const char* name : {"SINTER", "SUNION", "SDIFF"}) {
    for (const auto& a : set_inputs)
      for (const auto& b : set_inputs) out.push_back({name, a, b});
    for (std::size_t i = 0; i + 2 < s.size(); ++i) out.push_back({name, s[i], s[i + 1], s[i + 2]});
    out.push_back({name, s[0], s[1], s[2], s[0]});
    out.push_back({name, s[0], wrong[0]});
    out.push_back({name, wrong[1], s[0]});
    out.push_back({name, k.missing[0], wrong[0]});
    out.push_back({name, s[0], k.missing[0], k.missing[1]});
    out.push_back({name, k.missing[0], k.missing[1]});
    out.push_back({name, s[5], s[6]});
    out.push_back({name, s[6], s[5], s[0]});
  }
  for (const auto& a : set_inputs) {
    out.push_back({"SINTERCARD", "2", a, s[1]});
    out.push_back({"SINTERCARD", "3", a, s[1], s[2], "LIMIT", "2"});
  }
  for (const std::string limit : {"0", "1", "3", "100", "-1", "x", "9223372036854775808"})
    out.push_back({"SINTERCARD", "2", s[5], s[6], "LIMIT", limit});
  out.push_back({"SINTERCARD", "2", s[0], s[1], "LIMIT"});
  out.push_back({"SINTERCARD", "2", s[0], s[1], "LIMIT", "1", "LIMIT", "2"});
  out.push_back({"SINTERCARD", "2", s[0], s[1], "FOO"});
  out.push_back({"SINTERCARD", "2", s[0], wrong[0]});
  out.push_back({"SINTERCARD", "2", s[0], wrong[0], "LIMIT", "-1"});
  out.push_back({"SINTERCARD", "2", s[0], k.missing[0], "limit", "5"});

  // Sorted sets, with plain sets as inputs too.
  std::vector<std::string> zin = z;
  zin.push_back(s[0]);
  zin.push_back(s[3]);
  zin.push_back(k.missing[0]);
  const std::vector<std::vector<std::string>> options = {
      {},
      {"WITHSCORES"},
      {"AGGREGATE", "MIN", "WITHSCORES"},
      {"AGGREGATE", "max", "WITHSCORES"},
      {"aggregate", "sum", "withscores"},
      {"WEIGHTS", "2", "-1", "WITHSCORES"},
      {"WEIGHTS", "0", "inf", "WITHSCORES"},
      {"WEIGHTS", "-inf", "inf", "AGGREGATE", "MIN", "WITHSCORES"},
      {"WEIGHTS", "0.1", "0.7", "AGGREGATE", "SUM", "WITHSCORES"},
      {"WEIGHTS", "1e-3", "3", "AGGREGATE", "MAX"},
      {"WEIGHTS", "1"},
      {"WEIGHTS", "1", "x"},
      {"WEIGHTS", "nan", "1"},
      {"WEIGHTS", "0x10", "1", "WITHSCORES"},
      {"AGGREGATE", "AVG"},
      {"AGGREGATE"},
      {"WITHSCORES", "WITHSCORES"},
      {"LIMIT", "1"},
      {"FOO"},
  };
  for (const char* name : {"ZUNION", "ZINTER", "ZDIFF"}) {
    for (const auto& a : zin)
      for (const auto& b : zin)
        for (const auto& option : options) {
          std::vector<std::string> command = {name, "2", a, b};
          command.insert(command.end(), option.begin(), option.end());
          out.push_back(command);
        }
    out.push_back({name, "3", z[0], z[1], z[2], "WITHSCORES"});
    out.push_back({name, "3", z[0], z[1], z[2], "WEIGHTS", "1", "2", "3", "WITHSCORES"});
    out.push_back({name, "4", z[0], z[1], z[2], z[0], "WITHSCORES"});
    out.push_back({name, "2", z[0], wrong[0], "WITHSCORES"});
    out.push_back({name, "2", wrong[1], z[0], "FOO"});
    out.push_back({name, "2", k.missing[0], k.missing[1], "WITHSCORES"});
    out.push_back({name, "2", z[4], z[0], "WITHSCORES"});
  }
  for (const auto& a : zin) {
    out.push_back({"ZINTERCARD", "2", a, z[0]});
    out.push_back({"ZINTERCARD", "2", a, z[2], "LIMIT", "1"});
  }
  for (const std::string limit : {"0", "2", "-1", "x"})
    out.push_back({"ZINTERCARD", "2", z[0], z[1], "LIMIT", limit});
  out.push_back({"ZINTERCARD", "2", z[0], z[1], "WITHSCORES"});
  out.push_back({"ZINTERCARD", "2", z[0], wrong[0], "LIMIT", "x"});

  // HyperLogLogs, dense and sparse, and what is not one.
  const auto& h = k.hlls;
  for (const auto& a : h)
    for (const auto& b : h) out.push_back({"PFCOUNT", a, b});
  out.push_back({"PFCOUNT", h[0], h[1], h[2], h[3]});
  out.push_back({"PFCOUNT", h[0], k.missing[0]});
  out.push_back({"PFCOUNT", k.missing[0], k.missing[1]});
  out.push_back({"PFCOUNT", h[0], wrong[0]});      // a string, not an HLL
  out.push_back({"PFCOUNT", h[0], wrong[1]});      // a list
  out.push_back({"PFCOUNT", h[1], k.strings[8]});  // an integer
  out.push_back({"PFCOUNT", h[1], k.strings[9]});  // corrupted
  out.push_back({"PFCOUNT", k.strings[9], h[1], wrong[1]});

  // LCS.
  const auto& t = k.strings;
  std::vector<std::string> lcs_inputs = {t[0], t[1], t[2], t[3], t[4], t[5], t[6], k.missing[0]};
  const std::vector<std::vector<std::string>> lcs_options = {
      {},
      {"LEN"},
      {"IDX"},
      {"IDX", "WITHMATCHLEN"},
      {"IDX", "MINMATCHLEN", "4"},
      {"IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"},
      {"idx", "minmatchlen", "-3", "withmatchlen"},
      {"LEN", "IDX"},
      {"MINMATCHLEN"},
      {"MINMATCHLEN", "x"},
      {"WITHMATCHLEN"},
      {"FOO"},
  };
  for (const auto& a : lcs_inputs)
    for (const auto& b : lcs_inputs)
      for (const auto& option : lcs_options) {
        std::vector<std::string> command = {"LCS", a, b};
        command.insert(command.end(), option.begin(), option.end());
        out.push_back(command);
      }
  out.push_back({"LCS", t[0], wrong[1], "IDX"});
  out.push_back({"LCS", wrong[1], t[0], "FOO"});
  return out;
}

bool unspecified_order(const std::string& command) {
  return command == "SINTER" || command == "SUNION" || command == "SDIFF";
}

// Whether Redis's order of this set result is deterministic: SINTER walks its smallest input
// (ascending when that is an intset); SUNION and SDIFF answer an intset result in ascending
// order.
bool deterministic_order(RedisClient& reference, const std::vector<std::string>& command,
                         const std::vector<std::string>& members) {
  if (command[0] != "SINTER") return all_small_integers(members);
  std::string smallest;
  long long size = -1;
  for (std::size_t i = 1; i < command.size(); ++i) {
    long long card = reference.command({"SCARD", command[i]}).integer;
    if (size < 0 || card < size) {
      size = card;
      smallest = command[i];
    }
  }
  return reference.command({"OBJECT", "ENCODING", smallest}).str == "intset";
}

}  // namespace

TEST_CASE("cross-shard reads answer exactly what one Redis answers, in RESP2 and RESP3") {
  Cluster cluster(3);
  RedisServer reference_server;
  auto reference = reference_server.client();
  auto santral = cluster.client();
  Keys keys = load(cluster, reference, santral);
  auto all = commands(keys);

  Tally tally;
  int cross_shard = 0;
  for (int protocol : {2, 3}) {
    RawResp expected_side(reference_server.port());
    RawResp santral_side(cluster.santral().port());
    if (protocol == 3) {
      expected_side.call({"HELLO", "3"});
      santral_side.call({"HELLO", "3"});
    }
    for (const auto& command : all) {
      INFO("RESP" << protocol << ": " << text_of(command));
      std::string expected = expected_side.call(command);
      std::string got = santral_side.call(command);
      if (got == expected) {
        ++tally.exact;
      } else {
        auto e = sorted_members(expected);
        auto g = sorted_members(got);
        INFO("expected " << expected.substr(0, 300));
        INFO("got      " << got.substr(0, 300));
        REQUIRE(unspecified_order(command[0]));
        REQUIRE(e.has_value());
        REQUIRE(e == g);
        REQUIRE(!deterministic_order(reference, command, *e));
        ++tally.as_sets;
      }
    }
  }
  // The keys really were spread: most commands read from more than one shard.
  for (const auto& command : all) {
    std::set<std::size_t> shards;
    std::size_t first =
        command[0] == "LCS" || command[0] == "PFCOUNT" || command[0][0] == 'S' ? 1 : 2;
    if (command[0] == "SINTERCARD") first = 2;
    for (std::size_t i = first; i < command.size(); ++i)
      if (command[i].find(':') != std::string::npos) shards.insert(cluster.owner(command[i]));
    if (shards.size() > 1) ++cross_shard;
  }
  std::cout << "cross-shard reads: " << all.size() * 2 << " comparisons, " << tally.exact
            << " byte for byte, " << tally.as_sets << " as sets (Redis's hash-table order); "
            << cross_shard << " of " << all.size() << " commands span shards\n";
  CHECK(cross_shard > static_cast<int>(all.size()) / 2);
}

TEST_CASE("a cross-shard read over limits.max_merge_bytes is refused with what to do") {
  Cluster cluster(2, "limits:\n  max_merge_bytes: 2kb\n");
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  std::vector<std::string> big = {"SADD", a};
  for (int i = 0; i < 500; ++i) big.push_back("member" + std::to_string(i));
  REQUIRE(client.command(big).integer == 500);
  REQUIRE(client.command({"SADD", b, "member1", "x"}).integer == 2);

  auto refused = client.command({"SUNION", a, b});
  REQUIRE(refused.is_error());
  CHECK(refused.str.find("limits.max_merge_bytes (2048 bytes)") != std::string::npos);
  CHECK(refused.str.find("hash tag") != std::string::npos);
  // Small enough: merged.
  CHECK(client.command({"SINTERCARD", "2", b, b}).integer == 2);
  std::string c = cluster.key_on(0, "c");
  REQUIRE(client.command({"SADD", c, "x", "y"}).integer == 2);
  CHECK(client.command({"SINTER", c, b}).elements.size() == 1);
  // The connection goes on in order after a refusal.
  client.append({"SUNION", a, b});
  client.append({"SCARD", a});
  CHECK(client.get_reply().is_error());
  CHECK(client.get_reply().integer == 500);
}

TEST_CASE(
    "cross-shard reads: EXPLAIN shows the gather, MULTI still refuses, a down shard names itself") {
  Cluster cluster(2);
  auto client = cluster.client();
  std::string a = cluster.key_on(0, "a");
  std::string b = cluster.key_on(1, "b");
  REQUIRE(client.command({"SADD", a, "1", "2"}).integer == 2);
  REQUIRE(client.command({"SADD", b, "2", "3"}).integer == 2);

  auto e = client.command({"SANTRAL", "EXPLAIN", "ZUNION", "2", a, b, "WITHSCORES"});
  std::map<std::string, Reply> fields;
  for (std::size_t i = 0; i + 1 < e.elements.size(); i += 2)
    fields[e.elements[i].str] = e.elements[i + 1];
  CHECK(fields["kind"].str == "SHARD_GATHER");
  CHECK(fields["route"].str == "SHARD_GATHER");
  REQUIRE(fields["shards"].elements.size() == 2);
  REQUIRE(fields["steps"].elements.size() == 3);
  CHECK(fields["steps"].elements[0].str ==
        "read on shard 'shard0': ZRANGE " + a + " 0 -1 WITHSCORES; SMEMBERS " + a);
  CHECK(fields["steps"].elements[1].str ==
        "read on shard 'shard1': ZRANGE " + b + " 0 -1 WITHSCORES; SMEMBERS " + b);
  CHECK(fields["steps"].elements[2].str.starts_with("compute at the router: ZUNION"));
  CHECK(fields["note"].str.find("limits.max_merge_bytes") != std::string::npos);
  // EXPLAIN runs nothing.
  CHECK(cluster.shard(0).command_calls("smembers") == 0);

  auto sunion = client.command({"SUNION", a, b});
  CHECK(sunion.elements.size() == 3);
  CHECK(cluster.shard(0).command_calls("smembers") == 1);
  CHECK(cluster.shard(1).command_calls("smembers") == 1);

  REQUIRE(client.command({"MULTI"}).is_ok());
  auto queued = client.command({"SUNION", a, b});
  CHECK(queued.str.starts_with("CROSSSLOT"));
  CHECK(client.command({"EXEC"}).str.starts_with("EXECABORT"));

  cluster.shard(1).kill();
  auto failed = client.command({"SINTER", a, b});
  REQUIRE(failed.is_error());
  CHECK(failed.str.find("shard1") != std::string::npos);
  CHECK(client.command({"SMEMBERS", a}).elements.size() == 2);
}
