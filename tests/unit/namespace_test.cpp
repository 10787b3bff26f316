// Key namespaces (issue 4): patterns, range tables, placement per strategy through a ShardMap
// built from YAML, every validation error, and KEYS/SCAN MATCH narrowing (shards_for_pattern).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/config_error.h"
#include "config/namespace/hash_ring.h"
#include "config/namespace/key_pattern.h"
#include "config/namespace/key_slot.h"
#include "config/namespace/prefix_reach.h"
#include "config/namespace/range_table.h"
#include "config/shard_map.h"

using namespace santral::config;

namespace {

// A directory of this process's own (ctest may run other config tests at the same time),
// removed when the test program exits.
std::filesystem::path test_dir() {
  struct Dir {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("santral-namespace-test-" + std::to_string(::getpid()));
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

std::filesystem::path write_file(const std::string& text, const std::string& name) {
  auto path = test_dir() / name;
  std::ofstream(path) << text;
  return path;
}

Config load_text(const std::string& text, const std::string& name = "namespaces.yaml") {
  return load_config(write_file(text, name));
}

// Four shards; c has weight 2. `hash_tag` and `distribution` as given.
std::string header(const std::string& hash_tag = "{}", const std::string& distribution = "ketama") {
  return "listen: 127.0.0.1:6380\n"
         "hash: murmur\n"
         "distribution: " +
         distribution +
         "\n"
         "hash_tag: \"" +
         hash_tag +
         "\"\n"
         "shards:\n"
         "  - {name: a, address: 127.0.0.1:7001}\n"
         "  - {name: b, address: 127.0.0.1:7002}\n"
         "  - {name: c, address: 127.0.0.1:7003, weight: 2}\n"
         "  - {name: d, address: 127.0.0.1:7004}\n";
}

constexpr std::size_t A = 0, B = 1, C = 2, D = 3;

// One namespace of every strategy (and both range orders, both directory fallbacks).
const std::string kNamespaces = R"(namespaces:
  - name: sessions
    match: "session:{id}"
    strategy: hashed
    vnodes: 200
    shards: [a, b, c]
  - name: carts
    match: "cart:{user}:{item}"
    shard_key: user
    strategy: slots
    slots:
      - {shard: a, from: 0, to: 4095}
      - {shard: b, from: 4096, to: 8191}
      - {shard: c, from: 8192, to: 12287}
      - {shard: d, from: 12288, to: 16383}
  - name: customers
    match: "customer:{name}"
    shard_key: name
    strategy: range
    ranges:
      - {shard: a, to: "h"}
      - {shard: b, from: "h", to: "p"}
      - {shard: c, from: "p", to: "t"}
      - {shard: d, from: "t"}
  - name: invoices
    match: "invoice:{number}:{line}"
    shard_key: number
    strategy: range
    order: numeric
    ranges:
      - {shard: a, to: 1000000}
      - {shard: b, from: 1000000, to: 2000000}
      - {shard: d, from: 2000000}
  - name: orders
    match: "order:{seller}:{id}"
    shard_key: seller
    strategy: directory
    groups:
      seller42: b
      seller7: a
    fallback: {strategy: hashed, shards: [c, d]}
  - name: listings
    match: "listing:{seller}:{id}"
    shard_key: seller
    strategy: directory
    groups: {seller42: d}
    fallback:
      strategy: slots
      slots:
        - {shard: a, from: 0, to: 9999}
        - {shard: b, from: 10000, to: 16383}
  - name: tenants
    match: "tenant:{tenant}:{key}"
    shard_key: tenant
    strategy: zone
    zones:
      eu: [a, b]
      us: [c, d]
    groups:
      tenantA: eu
      tenantB: us
    default_zone: eu
)";

// Harder shapes: ranges that do not cover every key (the rest falls through), a numeric table
// up to the int64 limit followed by the same pattern hashed, a trailing literal, a leading
// field, and a catch-all at the end.
const std::string kTricky = R"(namespaces:
  - name: window
    match: "log:{day}"
    shard_key: day
    strategy: range
    ranges:
      - {shard: a, from: "2026-01", to: "2026-06"}
      - {shard: b, from: "2026-06", to: "2027-01"}
  - name: numbers
    match: "n:{num}"
    shard_key: num
    strategy: range
    order: numeric
    ranges:
      - {shard: a, to: -100}
      - {shard: b, from: -100, to: 0}
      - {shard: c, from: 0, to: 9223372036854775800}
      - {shard: d, from: 9223372036854775800}
  - name: numbers-rest
    match: "n:{num}"
    strategy: hashed
    shards: [c]
  - name: profiles
    match: "user:{id}:profile"
    shard_key: id
    strategy: directory
    groups: {alice: a}
  - name: regional
    match: "{region}/{id}"
    shard_key: region
    strategy: zone
    zones: {eu: [a, b], us: [c, d]}
    groups: {fr: eu, ca: us}
    default_zone: us
  - name: docs
    match: "doc:{tenant}::{id}"
    shard_key: tenant
    strategy: range
    ranges: [{shard: a, to: "ab:"}, {shard: c, from: "ab:"}]
  - name: pairs
    match: "p:{x}::{y}"
    shard_key: y
    strategy: slots
    slots: [{shard: a, from: 0, to: 8000}, {shard: d, from: 8001, to: 16383}]
  - name: rest
    match: "{key}"
    strategy: hashed
    shards: [b, d]
)";

// Few namespaces, a catch-all on one shard: narrowing shows in shards_for_pattern's answer.
const std::string kNarrow = R"(namespaces:
  - name: docs
    match: "doc:{tenant}::{id}"
    strategy: range
    ranges: [{shard: a, to: "ab:"}, {shard: b, from: "ab:"}]
  - name: customers
    match: "c:{name}"
    strategy: range
    ranges:
      - {shard: a, to: "h"}
      - {shard: b, from: "h", to: "p"}
      - {shard: c, from: "p", to: "t"}
      - {shard: d, from: "t"}
  - name: rest
    match: "{key}"
    strategy: hashed
    shards: [c]
)";

ShardMap map_of(const std::string& text) {
  return ShardMap(load_text(text));
}

std::string random_text(std::mt19937& rng, const std::string& alphabet, std::size_t max_len,
                        std::size_t min_len = 0) {
  std::uniform_int_distribution<std::size_t> len(min_len, max_len);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (std::size_t n = len(rng); n > 0; --n) s += alphabet[pick(rng)];
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// KeyPattern

TEST_CASE("key patterns compile into literals and named fields") {
  std::string problem;
  auto p = KeyPattern::compile("order:{customer}:{id}", problem);
  REQUIRE(p);
  CHECK(p->field_count() == 2);
  REQUIRE(p->segments().size() == 4);
  CHECK_FALSE(p->segments()[0].field);
  CHECK(p->segments()[0].text == "order:");
  CHECK(p->segments()[1].field);
  CHECK(p->segments()[1].text == "customer");
  CHECK(p->field_index("customer") == 0);
  CHECK(p->field_index("id") == 1);
  CHECK(p->field_index("order") == -1);
  CHECK(p->leading_literal() == "order:");
  CHECK(p->sample_key('#') == "order:#:#");
  CHECK(p->text() == "order:{customer}:{id}");

  auto lead = KeyPattern::compile("{region}/{id}", problem);
  REQUIRE(lead);
  CHECK(lead->leading_literal().empty());

  auto literal = KeyPattern::compile("config", problem);
  REQUIRE(literal);
  CHECK(literal->field_count() == 0);
  CHECK(literal->match("config"));
  CHECK_FALSE(literal->match("config2"));
  CHECK_FALSE(literal->match("confi"));
  CHECK(literal->fields("config") == std::vector<std::string_view>{});
  CHECK_FALSE(literal->fields("other"));
}

TEST_CASE("malformed key patterns are rejected with the reason") {
  struct Case {
    std::string pattern, says;
  };
  const Case cases[] = {
      {"order:{customer", "without a closing '}'"},
      {"order:customer}", "'}' without a '{'"},
      {"order:{}", "a field needs a name"},
      {"order:{cust omer}", "may use only letters, digits"},
      {"order:{a.b}", "may use only letters, digits"},
      {"order:{a}{b}", "must be separated by literal text"},
      {"{a}:{a}", "appears twice"},
      {"", "must not be empty"},
  };
  for (const auto& c : cases) {
    INFO(c.pattern);
    std::string problem;
    CHECK_FALSE(KeyPattern::compile(c.pattern, problem));
    CHECK_THAT(problem, Catch::Contains(c.says));
  }
  std::string problem;
  CHECK(KeyPattern::compile("a:{x_1-Y}", problem));
}

TEST_CASE("key patterns match whole keys; fields take one or more characters") {
  std::string problem;
  auto p = KeyPattern::compile("order:{customer}:{id}", problem).value();
  auto fields = p.fields("order:c1:17");
  REQUIRE(fields);
  CHECK((*fields)[0] == "c1");
  CHECK((*fields)[1] == "17");
  // The first field stops at the first ':' after it; the final one takes the rest.
  fields = p.fields("order:c1:17:extra");
  REQUIRE(fields);
  CHECK((*fields)[0] == "c1");
  CHECK((*fields)[1] == "17:extra");
  // A field may contain its next literal's text when it starts there (one character minimum).
  fields = p.fields("order::x:y");
  REQUIRE(fields);
  CHECK((*fields)[0] == ":x");
  CHECK((*fields)[1] == "y");
  std::string_view value;
  CHECK(p.match("order:c1:17", 1, &value));
  CHECK(value == "17");
  CHECK_FALSE(p.match("order:c1:"));  // empty final field
  CHECK_FALSE(p.match("order::"));
  CHECK_FALSE(p.match("order:c1"));
  CHECK_FALSE(p.match("orders:c1:17"));
  CHECK_FALSE(p.match("xorder:c1:17"));
  CHECK_FALSE(p.fields("order:c1"));

  auto tail = KeyPattern::compile("user:{id}:profile", problem).value();
  CHECK(tail.match("user:1:profile"));
  CHECK(tail.match("user:1:profile:profile"));  // id = "1:profile"
  CHECK(tail.fields("user:1:profile:profile").value()[0] == "1:profile");
  CHECK_FALSE(tail.match("user::profile"));
  CHECK_FALSE(tail.match("user:1:profile2"));
  CHECK_FALSE(tail.match("user:profile"));

  auto any = KeyPattern::compile("{key}", problem).value();
  CHECK(any.match("x"));
  CHECK(any.match(std::string("\0\xff", 2)));
  CHECK_FALSE(any.match(""));
}

TEST_CASE("key pattern matching agrees with the regular expression it stands for") {
  // A field is (.+?), a final field (.+); the whole key must match. The pattern claims linear
  // matching without backtracking gives the same answer and the same field values.
  std::mt19937 rng(4242);
  const std::string literal_chars = "ab:";
  int matched = 0;
  for (int round = 0; round < 400; ++round) {
    std::string pattern;
    std::string regex_text;
    int fields = 0;
    bool last_field = false;
    int parts = std::uniform_int_distribution<int>(1, 5)(rng);
    for (int i = 0; i < parts; ++i) {
      bool field = !last_field && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      if (field) {
        pattern += "{f" + std::to_string(fields++) + "}";
        regex_text += i + 1 == parts ? "(.+)" : "(.+?)";
      } else {
        std::string lit = random_text(rng, literal_chars, 2, 1);
        pattern += lit;
        for (char c : lit) regex_text += c == ':' ? std::string(":") : std::string(1, c);
      }
      last_field = field;
    }
    std::string problem;
    auto compiled = KeyPattern::compile(pattern, problem);
    REQUIRE(compiled);
    std::regex re(regex_text);
    for (int k = 0; k < 60; ++k) {
      std::string key = random_text(rng, "ab:x", 9);
      INFO("pattern " << pattern << " regex " << regex_text << " key " << key);
      std::smatch m;
      bool want = std::regex_match(key, m, re);
      auto got = compiled->fields(key);
      REQUIRE(got.has_value() == want);
      REQUIRE(compiled->match(key) == want);
      if (!want) continue;
      ++matched;
      for (int f = 0; f < fields; ++f) REQUIRE(std::string((*got)[f]) == m[f + 1].str());
    }
  }
  CHECK(matched > 1000);  // the comparison was not vacuous
}

// ---------------------------------------------------------------------------------------------
// RangeTable

TEST_CASE("lexical range tables: from inclusive, to exclusive, open ends, byte order") {
  RangeTable t(RangeOrder::Lexical,
               {{std::nullopt, "h", A}, {"h", "p", B}, {"p", "t", C}, {"t", std::nullopt, D}});
  CHECK(t.total());
  CHECK(t.find("") == 0u);
  CHECK(t.find("a") == 0u);
  CHECK(t.find("gzzzz") == 0u);
  CHECK(t.find("h") == 1u);
  CHECK(t.find("h\x01") == 1u);
  CHECK(t.find("ozz") == 1u);
  CHECK(t.find("p") == 2u);
  CHECK(t.find("t") == 3u);
  CHECK(t.find("\xff\xff") == 3u);
  CHECK(t.find("H") == 0u);  // byte order: uppercase sorts first
  CHECK(t.shard(2) == C);
  CHECK(t.label(0) == "[-inf, h)");
  CHECK(t.label(1) == "[h, p)");
  CHECK(t.label(3) == "[t, +inf)");

  RangeTable closed(RangeOrder::Lexical, {{"b", "d", A}, {"d", "f", B}});
  CHECK_FALSE(closed.total());
  CHECK_FALSE(closed.find("a"));
  CHECK_FALSE(closed.find(""));
  CHECK(closed.find("b") == 0u);
  CHECK(closed.find("czz") == 0u);
  CHECK(closed.find("d") == 1u);
  CHECK(closed.find("ezz") == 1u);
  CHECK_FALSE(closed.find("f"));
  CHECK_FALSE(closed.find("g"));
}

TEST_CASE("numeric range tables compare whole numbers and reject anything else") {
  RangeTable t(RangeOrder::Numeric,
               {{std::nullopt, "0", A}, {"0", "100", B}, {"100", std::nullopt, C}});
  CHECK_FALSE(t.total());  // non-numbers are never in a numeric table
  CHECK(t.numeric());
  CHECK(t.find("-5") == 0u);
  CHECK(t.find("-9223372036854775808") == 0u);
  CHECK(t.find("0") == 1u);
  CHECK(t.find("99") == 1u);
  CHECK(t.find("007") == 1u);  // 7, not the text "007"
  CHECK(t.find("100") == 2u);
  CHECK(t.find("20") == 1u);  // numerically, not as text ("20" > "100")
  CHECK(t.find("9223372036854775807") == 2u);
  CHECK_FALSE(t.find("9223372036854775808"));  // past int64
  CHECK_FALSE(t.find(""));
  CHECK_FALSE(t.find("abc"));
  CHECK_FALSE(t.find("1.5"));
  CHECK_FALSE(t.find(" 5"));
  CHECK_FALSE(t.find("5 "));
  CHECK_FALSE(t.find("-"));
  CHECK_FALSE(t.find("0x10"));

  RangeTable bounded(RangeOrder::Numeric, {{"10", "20", A}});
  CHECK_FALSE(bounded.find("9"));
  CHECK(bounded.find("10") == 0u);
  CHECK(bounded.find("19") == 0u);
  CHECK_FALSE(bounded.find("20"));
  CHECK(parse_int64("-42") == -42);
  CHECK_FALSE(parse_int64("+42"));
}

TEST_CASE("range tables name the ranges a shard key prefix can reach") {
  RangeTable t(RangeOrder::Lexical,
               {{std::nullopt, "h", A}, {"h", "p", B}, {"p", "t", C}, {"t", std::nullopt, D}});
  using V = std::vector<std::size_t>;
  CHECK(t.shards_for_prefix("") == V{A, B, C, D});
  CHECK(t.shards_for_prefix("a") == V{A});
  CHECK(t.shards_for_prefix("h") == V{B});
  CHECK(t.shards_for_prefix("o\xff") == V{B});
  CHECK(t.shards_for_prefix("zz") == V{D});
  CHECK(t.shards_for_prefix("\xff") == V{D});

  RangeTable n(RangeOrder::Numeric,
               {{std::nullopt, "0", A}, {"0", "100", B}, {"100", std::nullopt, C}});
  CHECK(n.shards_for_prefix("5") == V{B, C});  // 5, 50-59, 500-599, ...
  CHECK(n.shards_for_prefix("-") == V{A, B, C});
  CHECK(n.shards_for_prefix("-1") == V{A});
  CHECK(n.shards_for_prefix("0") == V{A, B, C});  // "007": not worth describing
  CHECK(n.shards_for_prefix("1a") == V{});        // no number starts with it
  CHECK(n.shards_for_prefix("") == V{A, B, C});
}

TEST_CASE("range prefix narrowing never misses the range of a key with that prefix") {
  std::mt19937_64 rng(7);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  RangeTable n(RangeOrder::Numeric, {{std::nullopt, "-1000", A},
                                     {"-1000", "0", B},
                                     {"0", "5000", C},
                                     {"5000", "9223372036854775800", A},
                                     {"9223372036854775800", std::nullopt, D}});
  RangeTable l(RangeOrder::Lexical, {{std::nullopt, "b", A},
                                     {"b", "b\xff", B},
                                     {"b\xff", "c", C},
                                     {"c", "m", D},
                                     {"m", std::nullopt, A}});
  std::vector<std::int64_t> numbers = {0,    1,   -1,  5000,    4999,    -1000,
                                       -999, max, min, max - 7, max - 8, min + 1};
  for (int i = 0; i < 3000; ++i) {
    int digits = std::uniform_int_distribution<int>(1, 19)(rng);
    std::int64_t magnitude = static_cast<std::int64_t>(rng() >> 1);
    std::int64_t cap = 1;
    for (int d = 1; d < digits && cap <= max / 10; ++d) cap *= 10;
    numbers.push_back((rng() & 1 ? -1 : 1) * (magnitude % cap));
  }
  for (auto number : numbers) {
    std::string text = std::to_string(number);
    auto range = n.find(text);
    REQUIRE(range);
    for (std::size_t len = 0; len <= text.size(); ++len) {
      INFO(text << " prefix " << text.substr(0, len));
      auto shards = n.shards_for_prefix(text.substr(0, len));
      REQUIRE(std::count(shards.begin(), shards.end(), n.shard(*range)) == 1);
    }
  }
  std::mt19937 text_rng(8);
  for (int i = 0; i < 5000; ++i) {
    std::string key = random_text(text_rng, std::string("abcmn\xff", 6), 5);
    auto range = l.find(key);
    REQUIRE(range);  // the lexical table is total
    for (std::size_t len = 0; len <= key.size(); ++len) {
      auto shards = l.shards_for_prefix(key.substr(0, len));
      REQUIRE(std::count(shards.begin(), shards.end(), l.shard(*range)) == 1);
    }
  }
}

namespace {

const std::string N = "namespaces:\n";

// A namespace entry: name, match, strategy, then `rest` (already indented by four spaces).
std::string entry(const std::string& name, const std::string& match, const std::string& strategy,
                  const std::string& rest = "") {
  return "  - name: " + name + "\n    match: \"" + match + "\"\n    strategy: " + strategy + "\n" +
         rest;
}

// The line of `text` that carries the marker "#<" (1-based).
int marked_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("#<") != std::string::npos) return n;
  return -1;
}

struct ErrorCase {
  std::string tail;  // after the header; one line carries "#<"
  std::string key;
  std::string says;
};

void check_error(const ErrorCase& c) {
  std::string text = header() + c.tail;
  int line = marked_line(text);
  INFO(text);
  REQUIRE(line > 0);
  auto path = write_file(text, "bad-namespaces.yaml");
  try {
    load_config(path);
    FAIL("config loaded but should have been rejected");
  } catch (const ConfigError& e) {
    std::string what = e.what();
    INFO(what);
    CHECK(e.file() == path);
    CHECK(e.line() == line);
    CHECK(e.key() == c.key);
    CHECK_THAT(what,
               Catch::StartsWith(path.string() + ":" + std::to_string(line) + ": " + c.key + ": "));
    CHECK_THAT(what, Catch::Contains(c.says));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Placement through a ShardMap built from YAML

TEST_CASE("the shard key defaults to the first field; a pattern without fields, the whole key") {
  ShardMap map = map_of(header() + N + entry("o", "order:{customer}:{id}", "hashed") +
                        entry("one", "config", "hashed"));
  CHECK(map.place("order:c1:17").shard_key == "c1");
  CHECK(map.shard_for_key("order:c1:17") == map.shard_for_key("order:c1:18"));
  CHECK(map.place("config").shard_key == "config");
  CHECK(map.place("config").namespace_name == "one");
}

TEST_CASE("hashed: keys spread over the listed shards and no others") {
  ShardMap map = map_of(header() + kNamespaces);
  std::map<std::size_t, int> counts;
  for (int i = 0; i < 6000; ++i) {
    std::string key = "session:" + std::to_string(i);
    auto p = map.place(key);
    REQUIRE(p.namespace_name == "sessions");
    REQUIRE(p.strategy == "hashed");
    REQUIRE(p.shard_key == std::to_string(i));  // no shard_key: the first field
    REQUIRE(p.shard == map.shard_for_key(key));
    ++counts[p.shard];
  }
  CHECK(counts.count(D) == 0);
  REQUIRE(counts.size() == 3);
  // c has weight 2: about half of the keys.
  CHECK(counts[C] > 2400);
  CHECK(counts[C] < 3600);
  CHECK(counts[A] > 900);
  CHECK(counts[B] > 900);
}

TEST_CASE("hash rings get vnodes points per unit of weight") {
  using santral::hashkit::RingNode;
  std::vector<HashRing::Member> members = {{RingNode{"a", 1}, 0}, {RingNode{"b", 3}, 5}};
  HashRing ring(members, 10);
  CHECK(ring.point_count() == 40);
  std::set<std::size_t> seen;
  for (std::uint32_t h = 0; h < 4000; ++h) seen.insert(ring.locate(h * 1073741u));
  CHECK(seen == std::set<std::size_t>{0, 5});
  HashRing reordered(std::vector<HashRing::Member>{members[1], members[0]}, 10);
  for (std::uint32_t h = 0; h < 4000; ++h)
    REQUIRE(ring.locate(h * 1073741u) == reordered.locate(h * 1073741u));
}

TEST_CASE("slots: CRC16 of the shard key picks the slot, the slot table the shard") {
  // Redis Cluster's CRC16 (XMODEM) check value and slots it documents.
  CHECK(key_slot("123456789") == 0x31C3);
  CHECK(key_slot("") == 0);
  CHECK(key_slot("foo") == 12182);
  CHECK(key_slot("bar") == 5061);
  ShardMap map = map_of(header() + kNamespaces);
  std::set<std::size_t> used;
  for (int i = 0; i < 3000; ++i) {
    std::string user = "u" + std::to_string(i);
    std::string key = "cart:" + user + ":item" + std::to_string(i % 7);
    auto slot = key_slot(user);
    std::size_t want = slot < 4096 ? A : slot < 8192 ? B : slot < 12288 ? C : D;
    auto p = map.place(key);
    REQUIRE(p.namespace_name == "carts");
    REQUIRE(p.shard_key == user);
    REQUIRE(p.detail == "slot " + std::to_string(slot));
    REQUIRE(p.shard == want);
    REQUIRE(map.shard_for_key(key) == want);
    REQUIRE(map.shard_for_key("cart:" + user + ":other") == want);  // same user, same shard
    used.insert(want);
  }
  CHECK(used.size() == 4);
}

TEST_CASE("range: each shard key goes to the range holding it") {
  ShardMap map = map_of(header() + kNamespaces);
  const std::pair<std::string, std::size_t> lexical[] = {
      {"alice", A}, {"gzz", A}, {"h", B}, {"harry", B}, {"ozzy", B}, {"p", C},
      {"paul", C},  {"s", C},   {"t", D}, {"tom", D},   {"zoe", D},  {"Zed", A},
  };
  for (const auto& [name, shard] : lexical) {
    INFO(name);
    auto p = map.place("customer:" + name);
    CHECK(p.namespace_name == "customers");
    CHECK(p.strategy == "range");
    CHECK(p.shard_key == name);
    CHECK(p.shard == shard);
  }
  CHECK(map.place("customer:harry").detail == "range [h, p)");
  CHECK(map.place("customer:alice").detail == "range [-inf, h)");

  const std::pair<std::string, std::size_t> numeric[] = {
      {"-5", A},      {"0", A},       {"999999", A}, {"1000000", B},
      {"1999999", B}, {"2000000", D}, {"20", A},     {"9223372036854775807", D},
  };
  for (const auto& [number, shard] : numeric) {
    INFO(number);
    auto p = map.place("invoice:" + number + ":1");
    CHECK(p.namespace_name == "invoices");
    CHECK(p.shard_key == number);
    CHECK(p.shard == shard);
  }
  // Not a number: not in the namespace, so the default placement decides.
  ShardMap plain = map_of(header());
  for (std::string key : {"invoice:abc:1", "invoice:1.5:1", "invoice:99999999999999999999:1"}) {
    INFO(key);
    CHECK(map.place(key).namespace_name.empty());
    CHECK(map.shard_for_key(key) == plain.shard_for_key(key));
  }
}

TEST_CASE("directory: listed groups go to their shard, others to the fallback") {
  ShardMap map = map_of(header() + kNamespaces);
  for (int i = 0; i < 200; ++i) {
    std::string id = std::to_string(i);
    REQUIRE(map.shard_for_key("order:seller42:" + id) == B);
    REQUIRE(map.shard_for_key("order:seller7:" + id) == A);
    REQUIRE(map.shard_for_key("listing:seller42:" + id) == D);
  }
  CHECK(map.place("order:seller42:1").detail == "group seller42 -> listed");
  CHECK(map.place("order:seller9:1").detail == "group seller9 -> fallback hashed");
  std::map<std::size_t, int> hashed, slots;
  for (int s = 0; s < 3000; ++s) {
    std::string seller = "seller" + std::to_string(1000 + s);
    auto p = map.place("order:" + seller + ":1");
    REQUIRE(p.namespace_name == "orders");
    REQUIRE(p.strategy == "directory");
    REQUIRE(p.shard_key == seller);
    // Every key of a group is on one shard.
    REQUIRE(map.shard_for_key("order:" + seller + ":2") == p.shard);
    ++hashed[p.shard];
    auto slot = key_slot(seller);
    auto l = map.place("listing:" + seller + ":1");
    REQUIRE(l.shard == (slot <= 9999 ? A : B));
    REQUIRE(l.detail == "group " + seller + " -> fallback slots, slot " + std::to_string(slot));
    ++slots[l.shard];
  }
  // The hashed fallback uses only its own shards, c and d.
  CHECK(hashed.size() == 2);
  CHECK(hashed.count(C) == 1);
  CHECK(hashed.count(D) == 1);
  CHECK(slots.size() == 2);
}

TEST_CASE("zone: a group's zone, hashed within the zone's shards; others in default_zone") {
  ShardMap map = map_of(header() + kNamespaces);
  auto a = map.place("tenant:tenantA:k");
  CHECK(a.namespace_name == "tenants");
  CHECK(a.detail == "zone eu");
  CHECK((a.shard == A || a.shard == B));
  auto b = map.place("tenant:tenantB:k");
  CHECK(b.detail == "zone us");
  CHECK((b.shard == C || b.shard == D));
  // Each key is hashed within its zone: one tenant's keys spread over the zone's shards.
  std::set<std::size_t> a_shards, b_shards;
  for (int i = 0; i < 100; ++i) {
    a_shards.insert(map.shard_for_key("tenant:tenantA:" + std::to_string(i)));
    b_shards.insert(map.shard_for_key("tenant:tenantB:" + std::to_string(i)));
  }
  CHECK(a_shards == std::set<std::size_t>{A, B});
  CHECK(b_shards == std::set<std::size_t>{C, D});
  // A hash tag keeps keys together inside the zone.
  std::set<std::size_t> tagged;
  for (int i = 0; i < 50; ++i)
    tagged.insert(map.shard_for_key("tenant:tenantA:{t1}" + std::to_string(i)));
  CHECK(tagged.size() == 1);
  std::map<std::size_t, int> unlisted;
  for (int t = 0; t < 2000; ++t) {
    std::string tenant = "t" + std::to_string(t);
    auto p = map.place("tenant:" + tenant + ":k");
    REQUIRE(p.shard_key == tenant);
    REQUIRE(p.detail.starts_with("zone eu (default_zone"));
    ++unlisted[p.shard];
  }
  CHECK(unlisted.size() == 2);  // both eu shards, never us
  CHECK(unlisted.count(A) == 1);
  CHECK(unlisted.count(B) == 1);
}

TEST_CASE("a hash tag wins over the shard key field, within the namespace") {
  ShardMap map = map_of(header() + kNamespaces);
  // The tag text is placed instead of the field: orders of seller42 with tag {x} leave b.
  auto p = map.place("order:seller42:{elsewhere}");
  CHECK(p.namespace_name == "orders");
  CHECK(p.shard_key == "elsewhere");
  CHECK(p.detail == "group elsewhere -> fallback hashed");
  CHECK((p.shard == C || p.shard == D));
  // A tag naming a listed group goes to that group's shard.
  CHECK(map.shard_for_key("order:any:{seller42}") == B);
  CHECK(map.shard_for_key("order:{seller7}:1") == A);
  // Slots: the tag's slot, as Redis Cluster.
  auto c = map.place("cart:u1:{shared}");
  CHECK(c.shard_key == "shared");
  CHECK(c.detail == "slot " + std::to_string(key_slot("shared")));
  // Range: the tag is looked up in the table.
  CHECK(map.shard_for_key("customer:alice{zed}") == D);
  CHECK(map.shard_for_key("customer:{zed}") == D);
  // An empty tag is no tag.
  CHECK(map.place("customer:alice{}").shard_key == "alice{}");
  CHECK(map.shard_for_key("customer:alice{}") == A);
  // Without a hash tag setting, braces are ordinary bytes.
  ShardMap untagged = map_of(header("") + kNamespaces);
  CHECK(untagged.place("order:seller42:{elsewhere}").shard_key == "seller42");
  CHECK(untagged.shard_for_key("order:seller42:{elsewhere}") == B);
}

TEST_CASE("keys of no namespace are placed exactly as without namespaces") {
  for (std::string distribution : {"ketama", "modula"}) {
    for (std::string tag : {"{}", ""}) {
      ShardMap with = map_of(header(tag, distribution) + kNamespaces);
      ShardMap without = map_of(header(tag, distribution));
      std::mt19937 rng(11);
      int compared = 0;
      std::set<std::size_t> used;
      for (int i = 0; i < 5000; ++i) {
        std::string key = random_text(rng, "abcdefgorsx:{}0123456789", 14);
        if (i % 5 == 0) key = "customer:";               // empty field: matches no namespace
        if (i % 5 == 1) key = "invoice:x" + key + ":1";  // not a number
        if (i % 5 == 2) key = "order:" + key;
        if (!with.place(key).namespace_name.empty()) continue;
        INFO(distribution << " tag '" << tag << "' key " << key);
        REQUIRE(with.shard_for_key(key) == without.shard_for_key(key));
        auto p = with.place(key);
        auto q = without.place(key);
        REQUIRE(p.shard == q.shard);
        REQUIRE(p.strategy == distribution);
        REQUIRE(p.shard_key == q.shard_key);
        REQUIRE(p.detail == q.detail);
        used.insert(p.shard);
        ++compared;
      }
      CHECK(compared > 2500);
      CHECK(used.size() == 4);
    }
  }
}

TEST_CASE("moving one directory group moves that group's keys and nothing else") {
  std::string before = header() + kNamespaces;
  std::string after = before;
  auto at = after.find("      seller42: b\n");
  REQUIRE(at != std::string::npos);
  after.replace(at, 18, "      seller42: d\n");
  ShardMap old_map = map_of(before);
  ShardMap new_map = map_of(after);

  std::mt19937 rng(99);
  const std::vector<std::string> prefixes = {
      "order:", "listing:", "tenant:", "session:", "cart:", "customer:", "invoice:", "other:"};
  const std::vector<std::string> groups = {"seller42", "seller7", "seller1", "tenantA", "7"};
  int moved = 0, stayed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string key = prefixes[rng() % prefixes.size()] + groups[rng() % groups.size()] + ":" +
                      random_text(rng, "abc{}42", 6, 1);
    auto p = old_map.place(key);
    auto q = new_map.place(key);
    INFO(key);
    bool in_group = p.namespace_name == "orders" && p.shard_key == "seller42";
    if (in_group) {
      REQUIRE(p.shard == B);
      REQUIRE(q.shard == D);
      ++moved;
    } else {
      REQUIRE(q.shard == p.shard);
      REQUIRE(q.namespace_name == p.namespace_name);
      ++stayed;
    }
  }
  CHECK(moved > 100);
  CHECK(stayed > 10000);
}

TEST_CASE("describe lists the default placement and every namespace's table") {
  ShardMap map = map_of(header() + kNamespaces);
  std::string text = map.describe();
  INFO(text);
  for (std::string line : {
           "default placement: ketama over a, b, c, d (hash murmur, hash tag {})",
           "namespaces: 7, tried in order",
           "namespace sessions: match session:{id}, shard key {id}, strategy hashed",
           "hashed (murmur, 200 points per unit of weight) over a, b, c",
           "slots 4096-8191 -> b",
           "namespace customers: match customer:{name}, shard key {name}, strategy range (byte "
           "order)",
           "range [h, p) -> b",
           "(numeric order)",
           "range [2000000, +inf) -> d",
           "group seller42 -> b",
           "other groups: fallback hashed (murmur, 160 points per unit of weight) over c, d",
           "other groups: fallback slots",
           "    slots 10000-16383 -> b",
           "zone eu: a, b (default_zone)",
           "zone us: c, d\n",
           "group tenantB -> zone us",
       })
    CHECK_THAT(text, Catch::Contains(line));
  CHECK_THAT(map_of(header()).describe(), Catch::Contains("namespaces: none"));
}

TEST_CASE("the example namespaces config loads and places its documented keys") {
  // tests/unit/namespace_test.cpp -> the source tree.
  auto root = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  Config c = load_config(root / "config/examples/namespaces.yaml");
  ShardMap map(c);
  CHECK(map.namespaces().size() == 6);
  CHECK(map.place("order:seller42:1").shard == 1);
  CHECK(map.place("invoice:1500000:1").shard == 1);
  CHECK(map.place("cart:u:i").namespace_name == "carts");
}

// ---------------------------------------------------------------------------------------------
// Validation: every error names the file, the line and the key

namespace {

const std::string kFullSlots = "    slots: [{shard: a, from: 0, to: 16383}]\n";

}  // namespace

TEST_CASE("namespace list and entry errors") {
  const ErrorCase cases[] = {
      {"namespaces: {a: 1}  #<\n", "namespaces", "expected a list of namespaces"},
      {N + "  - just-a-string  #<\n", "namespaces[0]", "expected a namespace"},
      {N + "  - match: \"x:{id}\"  #<\n    strategy: hashed\n", "namespaces[0].name",
       "missing: every namespace needs a name"},
      {N + entry("\"\"  #<", "x:{id}", "hashed"), "namespaces[0].name", "must not be empty"},
      {N + "  - name: s  #<\n    strategy: hashed\n", "namespaces[0].match",
       "missing: the key pattern"},
      {N + "  - name: s\n    match: \"x:{id\"  #<\n    strategy: hashed\n", "namespaces[0].match",
       "'{' without a closing '}'"},
      {N + "  - name: s\n    match: \"x:{a}{b}\"  #<\n    strategy: hashed\n",
       "namespaces[0].match", "must be separated by literal text"},
      {N + "  - name: s\n    match: \"x:{a}:{a}\"  #<\n    strategy: hashed\n",
       "namespaces[0].match", "appears twice"},
      {N + "  - name: s\n    match: \"\"  #<\n    strategy: hashed\n", "namespaces[0].match",
       "must not be empty"},
      {N + "  - name: s\n    match: \"x:{id}\"\n    shard_key: user  #<\n    strategy: hashed\n",
       "namespaces[0].shard_key", "names no field of match 'x:{id}' (its fields: id)"},
      {N + "  - name: s\n    match: \"config\"\n    shard_key: id  #<\n    strategy: hashed\n",
       "namespaces[0].shard_key", "(its fields: none)"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n", "namespaces[0].strategy",
       "missing: one of hashed, slots, range, directory, zone"},
      {N + entry("s", "x:{id}", "consistent  #<"), "namespaces[0].strategy",
       "unknown strategy 'consistent'"},
      {N + entry("s", "x:{id}", "hashed", "    ranges: []  #<\n"), "namespaces[0].ranges",
       "is a setting of the range strategy, not of hashed"},
      {N + entry("s", "x:{id}", "hashed", "    groups: {}  #<\n"), "namespaces[0].groups",
       "is a setting of the directory or zone strategy, not of hashed"},
      {N + entry("s", "x:{id}", "range", "    vnodes: 10  #<\n"), "namespaces[0].vnodes",
       "is a setting of the hashed or zone strategy, not of range"},
      {N + entry("s", "x:{id}", "slots", "    order: numeric  #<\n"), "namespaces[0].order",
       "is a setting of the range strategy, not of slots"},
      {N + entry("s", "x:{id}", "hashed", "    color: red  #<\n"), "namespaces[0].color",
       "unknown key (expected one of: name, match, shard_key, strategy, read_from, near_cache, "
       "hash, vnodes, shards)"},
      {N + entry("s", "x:{id}", "hashed") + entry("s  #<", "y:{id}", "hashed"),
       "namespaces[1].name", "namespace name 's' is already used by namespaces[0]"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("hashed namespace errors") {
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "hashed", "    shards: [a, x]  #<\n"), "namespaces[0].shards[1]",
       "unknown shard 'x' (shards: a, b, c, d)"},
      {N + entry("s", "x:{id}", "hashed", "    shards: []  #<\n"), "namespaces[0].shards",
       "expected a non-empty list of shard names"},
      {N + entry("s", "x:{id}", "hashed", "    shards: b  #<\n"), "namespaces[0].shards",
       "expected a non-empty list of shard names"},
      {N + entry("s", "x:{id}", "hashed", "    shards: [a, b, a]  #<\n"), "namespaces[0].shards[2]",
       "shard 'a' is listed twice"},
      {N + entry("s", "x:{id}", "hashed", "    vnodes: 0  #<\n"), "namespaces[0].vnodes",
       "out of range"},
      {N + entry("s", "x:{id}", "hashed", "    vnodes: many  #<\n"), "namespaces[0].vnodes",
       "whole number"},
      {N + entry("s", "x:{id}", "hashed", "    hash: sha1  #<\n"), "namespaces[0].hash",
       "unknown hash function 'sha1'"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("slots namespace errors: coverage, gaps, overlaps") {
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: slots\n", "namespaces[0].slots",
       "missing: a slots namespace needs its slot ranges"},
      {N + entry("s", "x:{id}", "slots", "    slots: 5  #<\n"), "namespaces[0].slots",
       "expected a list of slot ranges"},
      {N + entry("s", "x:{id}", "slots", "    slots: []  #<\n"), "namespaces[0].slots",
       "expected a list of slot ranges"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16383, weight: 1}  #<\n"),
       "namespaces[0].slots[0].weight", "unknown key"},
      {N + entry("s", "x:{id}", "slots", "    slots:\n      - {shard: a, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "missing: every slot range needs shard, from and to"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: z, from: 0, to: 16383}  #<\n"),
       "namespaces[0].slots[0].shard", "unknown shard 'z'"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16384}  #<\n"),
       "namespaces[0].slots[0].to", "out of range"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: -1, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "out of range"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 100}\n"
                 "      - {shard: b, from: 100, to: 99}  #<\n"),
       "namespaces[0].slots[1].to", "99 is below from (100)"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 99}\n"
                 "      - {shard: b, from: 200, to: 16383}  #<\n"),
       "namespaces[0].slots[1].from", "slots 100 to 199 are assigned to no shard"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 1, to: 16383}  #<\n"),
       "namespaces[0].slots[0].from", "slots 0 to 0 are assigned to no shard"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 8191}\n"
                 "      - {shard: b, from: 8000, to: 16383}  #<\n"),
       "namespaces[0].slots[1].from", "slots 8000 to 8191 are already assigned"},
      // Listed out of order: the overlap is found after sorting and reported at the entry as
      // written.
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: b, from: 100, to: 16383}  #<\n"
                 "      - {shard: a, from: 0, to: 200}\n"),
       "namespaces[0].slots[0].from", "slots 100 to 200 are already assigned"},
      {N + entry("s", "x:{id}", "slots",
                 "    slots:\n      - {shard: a, from: 0, to: 16000}  #<\n"),
       "namespaces[0].slots", "slots 16001 to 16383 are assigned to no shard"},
  };
  for (const auto& c : cases) check_error(c);

  // Complete ranges listed out of order are fine.
  ShardMap map = map_of(header() + N +
                        entry("s", "x:{id}", "slots",
                              "    slots:\n      - {shard: b, from: 8192, to: 16383}\n"
                              "      - {shard: a, from: 0, to: 8191}\n"));
  CHECK(map.shard_for_key("x:foo") == (key_slot("foo") < 8192 ? A : B));
}

TEST_CASE("range namespace errors: order, bounds, unsorted, overlapping, gapped") {
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "range", "    order: random  #<\n    ranges: [{shard: a}]\n"),
       "namespaces[0].order", "expected lexical or numeric, got 'random'"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: range\n", "namespaces[0].ranges",
       "missing: a range namespace needs its ranges"},
      {N + entry("s", "x:{id}", "range", "    ranges: []  #<\n"), "namespaces[0].ranges",
       "expected a non-empty list of ranges"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {shard: a, upto: m}  #<\n"),
       "namespaces[0].ranges[0].upto", "unknown key"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {to: m}  #<\n"),
       "namespaces[0].ranges[0].shard", "missing: every range needs a shard"},
      {N + entry("s", "x:{id}", "range", "    ranges:\n      - {shard: q}  #<\n"),
       "namespaces[0].ranges[0].shard", "unknown shard 'q'"},
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 1e6}  #<\n"
                 "      - {shard: b, from: 1e6}\n"),
       "namespaces[0].ranges[0].to", "expected a whole number (order: numeric), got '1e6'"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, to: t}  #<\n"
                 "      - {shard: c, from: t}\n"),
       "namespaces[0].ranges[1].from", "only the first range may omit from"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: m}  #<\n"
                 "      - {shard: c, from: t}\n"),
       "namespaces[0].ranges[1].to", "only the last range may omit to"},
      {N + entry(
               "s", "x:{id}", "range",
               "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: m, to: m}  #<\n"),
       "namespaces[0].ranges[1].to", "'m' is not above from ('m')"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, from: m, to: t}\n"
                 "      - {shard: b, from: a, to: m}  #<\n"),
       "namespaces[0].ranges[1].from",
       "'a' is below the previous range's to ('t'): ranges must be sorted"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: k}  #<\n"),
       "namespaces[0].ranges[1].from", "'k' is below the previous range's to ('m')"},
      {N + entry("s", "x:{id}", "range",
                 "    ranges:\n      - {shard: a, to: m}\n      - {shard: b, from: n}  #<\n"),
       "namespaces[0].ranges[1].from", "leaves a gap [m, n) that no range holds"},
      // Numeric order compares numbers: 20 is below 100 although "20" sorts after "100".
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 100}\n"
                 "      - {shard: b, from: 20}  #<\n"),
       "namespaces[0].ranges[1].from", "'20' is below the previous range's to ('100')"},
      {N + entry("s", "x:{id}", "range",
                 "    order: numeric\n    ranges:\n      - {shard: a, to: 20}\n"
                 "      - {shard: b, from: 100}  #<\n"),
       "namespaces[0].ranges[1].from", "leaves a gap [20, 100)"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("directory namespace errors") {
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: directory\n",
       "namespaces[0].groups", "missing: a directory namespace needs its groups"},
      {N + entry("s", "x:{id}", "directory", "    groups: [a, b]  #<\n"), "namespaces[0].groups",
       "expected a mapping of groups to shards"},
      {N + entry("s", "x:{id}", "directory", "    groups:\n      seller1: zz  #<\n"),
       "namespaces[0].groups.seller1", "unknown shard 'zz'"},
      // A second line for a group (say, to move it) must not be silently outvoted by the first.
      {N + entry("s", "x:{id}", "directory",
                 "    groups:\n      seller42: d\n      seller7: a\n      seller42: b  #<\n"),
       "namespaces[0].groups.seller42", "group 'seller42' is listed twice"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    fallback: slots  #<\n"),
       "namespaces[0].fallback", "a slots fallback needs its slots"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    fallback: random  #<\n"),
       "namespaces[0].fallback", "expected hashed or slots, got 'random'"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n      ring: 2  #<\n"),
       "namespaces[0].fallback.ring", "unknown key"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      shards: [a]  #<\n"),
       "namespaces[0].fallback.strategy", "missing: hashed or slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: ring  #<\n"),
       "namespaces[0].fallback.strategy", "expected hashed or slots, got 'ring'"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots\n      shards: [a]  #<\n"
                 "      slots: [{shard: a, from: 0, to: 16383}]\n"),
       "namespaces[0].fallback.shards", "is a setting of a hashed fallback, not of slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots  #<\n"),
       "namespaces[0].fallback.slots", "missing: a slots fallback needs its slots"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: slots\n      slots:\n"
                 "        - {shard: a, from: 0, to: 99}\n"
                 "        - {shard: b, from: 200, to: 16383}  #<\n"),
       "namespaces[0].fallback.slots[1].from", "slots 100 to 199 are assigned to no shard"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n"
                 "      slots: [{shard: a, from: 0, to: 16383}]  #<\n"),
       "namespaces[0].fallback.slots", "is a setting of a slots fallback, not of hashed"},
      {N + entry("s", "x:{id}", "directory",
                 "    groups: {g: a}\n    fallback:\n      strategy: hashed\n"
                 "      shards: [a, nope]  #<\n"),
       "namespaces[0].fallback.shards[1]", "unknown shard 'nope'"},
      {N + entry("s", "x:{id}", "directory", "    groups: {g: a}\n    zones: {eu: [a]}  #<\n"),
       "namespaces[0].zones", "is a setting of the zone strategy, not of directory"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("zone namespace errors: empty zones, unknown zones and shards") {
  const std::string eu = "    zones:\n      eu: [a, b]\n      us: [c, d]\n";
  const ErrorCase cases[] = {
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: zone\n    default_zone: eu\n",
       "namespaces[0].zones", "missing: a zone namespace needs its zones"},
      {N + entry("s", "x:{id}", "zone", "    zones: {}  #<\n    default_zone: eu\n"),
       "namespaces[0].zones", "expected a mapping of zones to shard lists"},
      {N + entry("s", "x:{id}", "zone", "    zones:\n      eu: []  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu", "zone 'eu' is empty: list at least one shard"},
      {N + entry("s", "x:{id}", "zone", "    zones:\n      eu: [a, x]  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu[1]", "unknown shard 'x'"},
      {N + entry("s", "x:{id}", "zone", eu + "    groups: [g]  #<\n    default_zone: eu\n"),
       "namespaces[0].groups", "expected a mapping of groups to zones"},
      {N + entry("s", "x:{id}", "zone",
                 eu + "    groups:\n      tenantA: mars  #<\n    default_zone: eu\n"),
       "namespaces[0].groups.tenantA", "unknown zone 'mars' (zones: eu, us)"},
      {N + "  - name: s  #<\n    match: \"x:{id}\"\n    strategy: zone\n" + eu,
       "namespaces[0].default_zone", "missing: the zone of groups that are not listed"},
      {N + entry("s", "x:{id}", "zone",
                 eu + "    groups:\n      t1: us\n      t1: eu  #<\n    default_zone: eu\n"),
       "namespaces[0].groups.t1", "group 't1' is listed twice"},
      {N + entry("s", "x:{id}", "zone",
                 "    zones:\n      eu: [a]\n      eu: [b]  #<\n    default_zone: eu\n"),
       "namespaces[0].zones.eu", "zone 'eu' is listed twice"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: mars  #<\n"),
       "namespaces[0].default_zone", "unknown zone 'mars'"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: eu\n    shards: [a]  #<\n"),
       "namespaces[0].shards", "is a setting of the hashed strategy, not of zone"},
      {N + entry("s", "x:{id}", "zone", eu + "    default_zone: eu\n    fallback: hashed  #<\n"),
       "namespaces[0].fallback", "is a setting of the directory strategy, not of zone"},
  };
  for (const auto& c : cases) check_error(c);
}

TEST_CASE("unreachable namespaces are errors; reachable ones after partial ranges are not") {
  const std::string total_range = "    ranges: [{shard: a, to: m}, {shard: b, from: m}]\n";
  const ErrorCase cases[] = {
      {N + entry("s", "x:{id}", "hashed") + "  - name: t\n    match: \"x:{id}\"  #<\n" +
           "    strategy: slots\n" + kFullSlots,
       "namespaces[1].match", "can never be reached: the same pattern as namespaces[0] (s)"},
      {N + entry("all", "{key}", "hashed") + "  - name: t\n    match: \"x:{id}\"  #<\n" +
           "    strategy: hashed\n",
       "namespaces[1].match",
       "can never be reached: namespaces[0] (all, match '{key}') comes first and matches every "
       "key this pattern matches"},
      {N + entry("s", "x:{id}", "hashed") + "  - name: t\n    match: \"x:{a}:{b}\"  #<\n" +
           "    strategy: hashed\n",
       "namespaces[1].match", "namespaces[0] (s, match 'x:{id}') comes first"},
      {N + entry("s", "x:{id}", "range", total_range) +
           "  - name: t\n    match: \"x:{a}:y\"  #<\n    strategy: hashed\n",
       "namespaces[1].match", "can never be reached"},
      {N + entry("s", "{a}:{b}", "hashed") + entry("t", "q-{id}", "hashed") +
           "  - name: u\n    match: \"{a}::{b}\"  #<\n    strategy: hashed\n",
       "namespaces[2].match", "namespaces[0] (s, match '{a}:{b}')"},
  };
  for (const auto& c : cases) check_error(c);

  // Not errors: a range that does not cover every shard key, a numeric range (non-numbers
  // pass on), a narrower pattern first.
  CHECK_NOTHROW(load_text(header() + N +
                          entry("s", "x:{id}", "range", "    ranges: [{shard: a, from: m}]\n") +
                          entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N +
                entry("s", "x:{id}", "range", "    order: numeric\n    ranges: [{shard: a}]\n") +
                entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N + entry("s", "x:{a}:{b}", "hashed") + entry("t", "x:{id}", "hashed")));
  CHECK_NOTHROW(
      load_text(header() + N + entry("s", "x:{a}:y", "hashed") + entry("t", "x:{id}", "hashed")));
}

// ---------------------------------------------------------------------------------------------
// KEYS / SCAN MATCH narrowing

namespace {

// Keys shaped like every namespace of kNamespaces and kTricky (and none), with hash tags,
// separators and bytes that make fields end early or late.
std::string random_key(std::mt19937& rng) {
  static const std::vector<std::string> starts = {"session:",
                                                  "cart:",
                                                  "customer:",
                                                  "invoice:",
                                                  "order:",
                                                  "listing:",
                                                  "tenant:",
                                                  "log:2026-",
                                                  "n:",
                                                  "n:-",
                                                  "n:92233720368547758",
                                                  "user:",
                                                  "fr/",
                                                  "ca/",
                                                  "p:",
                                                  "",
                                                  "x",
                                                  "customer:{",
                                                  "order:seller42:",
                                                  "doc:ab",
                                                  "doc:",
                                                  "c:",
                                                  "c:h"};
  static const std::vector<std::string> tokens = {
      "a",       "h",       "p",       "t",          "z",         "0",    "1",
      "9",       "00",      ":",       "::",         "{",         "}",    "{}",
      "/",       "-",       "\xff",    "\x01",       "*",         "?",    "seller42",
      "seller7", "tenantA", "tenantB", ":profile",   "alice",     "12",   "06",
      "2026-",   "1000000", "{zed}",   "{seller42}", "{tenantB}", "-100", "9223372036854775",
      "ab:",     "ab"};
  std::string key = starts[rng() % starts.size()];
  for (int n = static_cast<int>(rng() % 6); n > 0; --n) key += tokens[rng() % tokens.size()];
  return key;
}

}  // namespace

TEST_CASE("shards_for_pattern never misses the shard of a key the glob matches") {
  struct Setup {
    std::string name, text;
    bool deterministic;
    std::size_t min_narrowed;  // about half of what this seed gives: not vacuous
  };
  const Setup setups[] = {
      {"namespaces, tag {}", header() + kNamespaces, true, 700},
      {"namespaces, no tag", header("") + kNamespaces, true, 900},
      {"namespaces, tag [], modula", header("[]", "modula") + kNamespaces, true, 250},
      {"namespaces, random", header("{}", "random") + kNamespaces, false, 300},
      {"tricky, tag {}", header() + kTricky, true, 450},
      {"tricky, no tag", header("") + kTricky, true, 1700},
      {"narrow, no tag", header("") + kNarrow, true, 1000},
      {"narrow, tag {}", header() + kNarrow, true, 1000},
      {"no namespaces", header(), true, 400},  // only globs that hold a whole tag narrow
  };
  for (const auto& setup : setups) {
    ShardMap map = map_of(setup.text);
    std::mt19937 rng(2026);
    std::size_t narrowed = 0;
    for (int i = 0; i < 20000; ++i) {
      std::string key = random_key(rng);
      std::string glob = key.substr(0, rng() % (key.size() + 1)) + "*";
      INFO(setup.name << ": key '" << key << "' glob '" << glob << "'");
      auto shards = map.shards_for_pattern(glob);
      REQUIRE(std::is_sorted(shards.begin(), shards.end()));
      REQUIRE(std::adjacent_find(shards.begin(), shards.end()) == shards.end());
      if (setup.deterministic) {
        REQUIRE(std::count(shards.begin(), shards.end(), map.shard_for_key(key)) == 1);
        // A glob without wildcards is one key: exactly its shard.
        if (key.find_first_of("*?[\\") == std::string::npos)
          REQUIRE(map.shards_for_pattern(key) == std::vector<std::size_t>{map.shard_for_key(key)});
      } else if (map.place(key).namespace_name.empty()) {
        REQUIRE(shards.size() == map.shard_count());
      } else {
        REQUIRE(std::count(shards.begin(), shards.end(), map.shard_for_key(key)) == 1);
      }
      narrowed += shards.size() < map.shard_count();
    }
    INFO(setup.name);
    CHECK(narrowed > setup.min_narrowed);
  }
}

TEST_CASE("what a glob's literal prefix says about a pattern's shard key") {
  std::string problem;
  auto order = KeyPattern::compile("order:{seller}:{id}", problem).value();
  auto r = reach(order, 0, "order:s1:");
  CHECK_FALSE(r.disjoint);
  CHECK(r.covers);
  CHECK(r.prefix_unmatched);  // "order:s1:" itself has an empty id
  CHECK(r.shard_key == "s1");
  r = reach(order, 0, "order:s1:9");
  CHECK(r.covers);
  CHECK_FALSE(r.prefix_unmatched);
  r = reach(order, 1, "order:s1:9");
  CHECK(r.shard_key_prefix == "9");
  r = reach(order, 0, "order:s1");
  CHECK_FALSE(r.covers);
  CHECK_FALSE(r.shard_key);
  CHECK(r.shard_key_prefix == "s1");
  r = reach(order, 0, "ord");
  CHECK_FALSE(r.disjoint);
  CHECK_FALSE(r.shard_key);
  CHECK_FALSE(r.shard_key_prefix);
  CHECK(reach(order, 0, "orx").disjoint);
  CHECK(reach(order, 0, "order:s1:").shard_key == "s1");

  // A two-byte literal after the shard key may begin on the prefix's last byte.
  auto doc = KeyPattern::compile("doc:{tenant}::{id}", problem).value();
  CHECK(reach(doc, 0, "doc:ab:").shard_key_prefix == "ab");
  CHECK(reach(doc, 0, "doc:ab::").shard_key == "ab");

  // A trailing literal is matched at the end of the key, which a prefix does not show.
  auto tail = KeyPattern::compile("user:{id}:profile", problem).value();
  r = reach(tail, 0, "user:al");
  CHECK_FALSE(r.disjoint);
  CHECK_FALSE(r.covers);
  CHECK_FALSE(r.shard_key);
  CHECK_FALSE(r.shard_key_prefix);

  auto literal = KeyPattern::compile("config", problem).value();
  CHECK(reach(literal, -1, "con").shard_key == "config");
  CHECK(reach(literal, -1, "cx").disjoint);
  CHECK(reach(literal, -1, "configs").disjoint);

  CHECK(glob_literal_prefix("a*b") == "a");
  CHECK(glob_literal_prefix("a?b") == "a");
  CHECK(glob_literal_prefix("a[bc]") == "a");
  CHECK(glob_literal_prefix("a\\*") == "a");
  CHECK(glob_literal_prefix("abc") == "abc");
  CHECK(glob_literal_prefix("*") == "");
}

TEST_CASE("shards_for_pattern narrows by range, group and tag") {
  using V = std::vector<std::size_t>;
  ShardMap map = map_of(header("") + kNamespaces);
  // Range namespaces: the ranges the literal prefix of the shard key can reach.
  CHECK(map.shards_for_pattern("customer:a*") == V{A});
  CHECK(map.shards_for_pattern("customer:h*") == V{B});
  CHECK(map.shards_for_pattern("customer:zo*") == V{D});
  CHECK(map.shards_for_pattern("customer:a?c") == V{A});
  CHECK(map.shards_for_pattern("customer:*") == V{A, B, C, D});
  // Directory: a pinned listed group is that group's shard, plus the shard of the one key the
  // glob matches outside the namespace ("order:seller42:" has an empty id).
  auto pinned = V{B, map.shard_for_key("order:seller42:")};
  std::sort(pinned.begin(), pinned.end());
  pinned.erase(std::unique(pinned.begin(), pinned.end()), pinned.end());
  CHECK(map.shards_for_pattern("order:seller42:*") == pinned);
  CHECK(map.shards_for_pattern("order:seller42:1*") == V{B});  // no key outside it
  CHECK(map.shards_for_pattern("order:seller7:9*") == V{A});
  // An unlisted group: its fallback shard.
  CHECK(map.shards_for_pattern("order:seller9:1*") == V{map.shard_for_key("order:seller9:1")});
  // Group not pinned: the namespace's shards (directory lists a, b; fallback c, d) and the
  // default placement of keys with an empty id or seller.
  CHECK(map.shards_for_pattern("order:sel*") == V{A, B, C, D});
  // Zone: a pinned group's keys are hashed over its zone: the zone's shards.
  CHECK(map.shards_for_pattern("tenant:tenantB:x*") == V{C, D});
  // Slots: a pinned shard key.
  CHECK(map.shards_for_pattern("cart:bob:*").size() <= 2);
  CHECK(map.shards_for_pattern("cart:bob:i*") == V{map.shard_for_key("cart:bob:i")});
  // Hashed over three shards: never d.
  CHECK(map.shards_for_pattern("session:a*") == V{A, B, C});

  // With a hash tag a key's tag can come from the part the glob leaves open, so a range
  // prefix no longer narrows within the namespace...
  ShardMap tagged = map_of(header() + kNamespaces);
  CHECK(tagged.shards_for_pattern("customer:a*") == V{A, B, C, D});
  CHECK(tagged.shards_for_pattern("session:a*") == V{A, B, C});
  // ...unless the prefix holds the whole tag: one shard.
  CHECK(tagged.shards_for_pattern("customer:a{zed}*") == V{D});
  CHECK(tagged.shards_for_pattern("order:x:{seller42}*") == V{B});
  CHECK(tagged.shards_for_pattern("other:{seller42}*") ==
        V{tagged.shard_for_key("other:{seller42}")});
  // An empty tag is no tag: narrowing works again.
  CHECK(tagged.shards_for_pattern("customer:a{}*") == V{A});

  // Numeric ranges, with the rest of the pattern's keys hashed onto c.
  ShardMap tricky = map_of(header("") + kTricky);
  CHECK(tricky.shards_for_pattern("n:-1*") == V{A, B, C});  // -1..-99 on b, below on a; rest c
  CHECK(tricky.shards_for_pattern("n:5*") == V{C});
  CHECK(tricky.shards_for_pattern("n:922337203685477580*") == V{C, D});
  // A partial lexical window, and "{region}/{id}" can still match "log:2026-03/x" (region
  // "log:2026-03", default_zone us): every shard.
  CHECK(tricky.shards_for_pattern("log:2026-03*") == V{A, B, C, D});
  // A trailing literal cannot be seen in a prefix: every shard the namespace can use (the
  // directory's hashed fallback defaults to all shards).
  CHECK(tricky.shards_for_pattern("user:alice*") == V{A, B, C, D});
  // The shard key ends where a two-byte literal begins, which may be the prefix's last byte:
  // tenant "ab" (doc:ab::1, on a) and tenant "ab:x" (doc:ab:x::1, on b) both start "doc:ab:".
  ShardMap narrow = map_of(header("") + kNarrow);
  CHECK(narrow.shards_for_pattern("doc:ab:*") == V{A, B, C});  // c: "rest" takes the others
  CHECK(narrow.shards_for_pattern("doc:ab::*") == V{A, C});
  CHECK(narrow.shards_for_pattern("doc:ab::1*") == V{A});
  CHECK(narrow.shards_for_pattern("c:alice*") == V{A});
  CHECK(narrow.shards_for_pattern("c:*") == V{A, B, C, D});
  // A leading field pinned by its literal: that group's zone.
  CHECK(tricky.shards_for_pattern("fr/x*") == V{A, B});
}

TEST_CASE("read_from per namespace: for its keys only; a bad value names the key") {
  ShardMap map =
      map_of(header() + N + entry("p", "profile:{id}", "hashed", "    read_from: replica\n") +
             entry("s", "session:{id}", "hashed"));
  CHECK(map.read_from_of("profile:1") == santral::config::ReadFrom::Replica);
  CHECK_FALSE(map.read_from_of("session:1").has_value());  // the config's read_from
  CHECK_FALSE(map.read_from_of("other").has_value());
  CHECK_THAT(map.describe(), Catch::Contains("read_from: replica"));
  CHECK_FALSE(map_of(header() + N + entry("s", "session:{id}", "hashed"))
                  .read_from_of("session:1")
                  .has_value());
  check_error({N + entry("p", "profile:{id}", "hashed", "    read_from: nowhere  #<\n"),
               "namespaces[0].read_from", "expected primary, prefer-replica or replica"});
}
