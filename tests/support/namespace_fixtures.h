// Shared by the tests of config/namespace/ and placement/namespace/: a config with four shards (a,
// b, c with weight 2, d) written to a file of this process's own and loaded, one namespace of every
// strategy, and the check that a bad config is rejected naming its file, line and key.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "config/config.h"
#include "config/config_error.h"
#include "placement/shard_map.h"

namespace santral::config::fixtures {

// A directory of this process's own (ctest may run other config tests at the same time),
// removed when the test program exits.
inline std::filesystem::path test_dir() {
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

inline std::filesystem::path write_file(const std::string& text, const std::string& name) {
  auto path = test_dir() / name;
  std::ofstream(path) << text;
  return path;
}

inline Config load_text(const std::string& text, const std::string& name = "namespaces.yaml") {
  return load_config(write_file(text, name));
}

// Four shards; c has weight 2. `hash_tag` and `distribution` as given.
inline std::string header(const std::string& hash_tag = "{}",
                          const std::string& distribution = "ketama") {
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

inline constexpr std::size_t A = 0, B = 1, C = 2, D = 3;

// One namespace of every strategy (and both range orders, both directory fallbacks).
inline const std::string kNamespaces = R"(namespaces:
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

inline placement::ShardMap map_of(const std::string& text) {
  return placement::ShardMap(load_text(text));
}

inline std::string random_text(std::mt19937& rng, const std::string& alphabet, std::size_t max_len,
                               std::size_t min_len = 0) {
  std::uniform_int_distribution<std::size_t> len(min_len, max_len);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (std::size_t n = len(rng); n > 0; --n) s += alphabet[pick(rng)];
  return s;
}

inline const std::string N = "namespaces:\n";

// A namespace entry: name, match, strategy, then `rest` (already indented by four spaces).
inline std::string entry(const std::string& name, const std::string& match,
                         const std::string& strategy, const std::string& rest = "") {
  return "  - name: " + name + "\n    match: \"" + match + "\"\n    strategy: " + strategy + "\n" +
         rest;
}

// The line of `text` that carries the marker "#<" (1-based).
inline int marked_line(const std::string& text) {
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

inline void check_error(const ErrorCase& c) {
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

}  // namespace santral::config::fixtures
