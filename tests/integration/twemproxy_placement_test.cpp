// Santral's hashkit against a real twemproxy: keys are written through nutcracker 0.5.0, read
// back from each redis-server directly, and every key must sit on the shard Santral's own
// hash function + distribution predicts. Covers every hash function, ketama and modula, named
// and unnamed servers, unequal weights, hash tags, binary keys and the empty key.

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "config/hashkit/hash_functions.h"
#include "config/hashkit/ketama.h"
#include "config/hashkit/modula.h"
#include "tests/support/free_port.h"
#include "tests/support/nutcracker_process.h"
#include "tests/support/redis_server.h"

using namespace santral::hashkit;
using santral::test::NutcrackerProcess;
using santral::test::RedisServer;
using santral::test::Reply;

namespace {

constexpr std::size_t kShards = 4;
constexpr std::array<std::uint32_t, kShards> kWeights = {1, 2, 1, 3};
// Listed out of twemproxy's name order (shorter first, then bytewise: mu, zeta, alpha,
// beta-longer), so modula proves that slots follow that order and not the file's.
constexpr std::array<std::string_view, kShards> kNames = {"zeta", "alpha", "mu", "beta-longer"};

// Started once for the whole binary; every case flushes them first.
std::vector<std::unique_ptr<RedisServer>>& shards() {
  static std::vector<std::unique_ptr<RedisServer>> servers = [] {
    std::vector<std::unique_ptr<RedisServer>> s;
    for (std::size_t i = 0; i < kShards; ++i) s.push_back(std::make_unique<RedisServer>());
    return s;
  }();
  return servers;
}

struct Pool {
  std::string hash;
  std::string distribution;
  std::vector<std::string> names;  // empty: servers without a name
  std::vector<std::uint32_t> weights;
  bool hash_tag = false;
};

std::string nutcracker_yaml(const Pool& pool, int listen_port) {
  std::string yaml = "santral_compat:\n";
  yaml += "  listen: 127.0.0.1:" + std::to_string(listen_port) + "\n";
  yaml += "  redis: true\n";
  yaml += "  hash: " + pool.hash + "\n";
  yaml += "  distribution: " + pool.distribution + "\n";
  if (pool.hash_tag) yaml += "  hash_tag: \"{}\"\n";
  yaml += "  timeout: 5000\n";
  yaml += "  auto_eject_hosts: false\n";
  yaml += "  servers:\n";
  for (std::size_t i = 0; i < pool.weights.size(); ++i) {
    yaml += "   - 127.0.0.1:" + std::to_string(shards()[i]->port()) + ":" +
            std::to_string(pool.weights[i]);
    if (!pool.names.empty()) yaml += " " + pool.names[i];
    yaml += "\n";
  }
  return yaml;
}

// twemproxy's hash tag rule (nc_server.c server_pool_idx): the bytes between the first '{'
// and the first '}' after it, when there is at least one; otherwise the whole key.
std::string_view hashed_part(std::string_view key, bool hash_tag) {
  if (!hash_tag) return key;
  auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

// The shard Santral's hashkit picks for `key`, as an index into the pool's server list.
class Placement {
 public:
  explicit Placement(const Pool& pool) : pool_(pool) {
    for (std::size_t i = 0; i < pool.weights.size(); ++i) {
      // twemproxy hashes the server's name, or "host:port" without one (port 11211: "host").
      names_.push_back(pool.names.empty() ? shards()[i]->address() : pool.names[i]);
    }
    for (std::size_t i = 0; i < names_.size(); ++i) nodes_.push_back({names_[i], pool.weights[i]});
    function_ = *hash_function_named(pool.hash);
    if (pool.distribution == "ketama") ketama_.emplace(nodes_);
    if (pool.distribution == "modula") modula_.emplace(nodes_);
  }
  Placement(const Placement&) = delete;  // nodes_ point into names_
  Placement& operator=(const Placement&) = delete;

  std::size_t shard_of(std::string_view key) const {
    std::string_view part = hashed_part(key, pool_.hash_tag);
    // twemproxy never hashes an empty key (nor anything in a one-server pool): it uses 0.
    std::uint32_t hash = part.empty() ? 0 : function_(part);
    return ketama_ ? ketama_->locate(hash) : modula_->locate(hash);
  }

 private:
  Pool pool_;
  std::vector<std::string> names_;
  std::vector<RingNode> nodes_;
  HashFunction function_ = nullptr;
  std::optional<KetamaRing> ketama_;
  std::optional<ModulaTable> modula_;
};

std::string printable(std::string_view key) {
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::vector<std::string> test_keys() {
  std::vector<std::string> keys;
  for (int i = 0; i < 1200; ++i) keys.push_back("key:" + std::to_string(i));
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> length(1, 48);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 800; ++i) {
    std::string key(static_cast<std::size_t>(length(rng)), '\0');
    for (char& c : key) c = static_cast<char>(byte(rng));  // bytes >= 0x80 and NULs too
    keys.push_back(std::move(key));
  }
  for (const char* key : {"{user1000}.following", "{user1000}.followers", "{user1001}.followers",
                          "x{a}y{b}", "{}", "foo{}{bar}", "foo{bar", "}{zap}", "{{nested}}",
                          "pre{\xff\xfe}post", "{\xe9t\xe9}", "\xe9t\xe9", ""}) {
    keys.emplace_back(key);
  }
  return keys;
}

// Writes every key through nutcracker, then finds it on the shards themselves.
std::map<std::string, std::size_t> place_through_nutcracker(const Pool& pool,
                                                            const std::vector<std::string>& keys) {
  for (auto& shard : shards()) REQUIRE(shard->client().command({"FLUSHALL"}).is_ok());

  int port = santral::test::free_loopback_port();
  NutcrackerProcess nutcracker(nutcracker_yaml(pool, port), port);
  auto proxy = nutcracker.client();
  for (const auto& key : keys) proxy.append({"SET", key, "v"});
  for (const auto& key : keys) {
    Reply reply = proxy.get_reply();
    INFO("SET of a " << key.size() << "-byte key through nutcracker: " << reply.str);
    REQUIRE(reply.is_ok());
  }

  std::map<std::string, std::size_t> found;
  std::size_t stored = 0;
  for (std::size_t i = 0; i < shards().size(); ++i) {
    Reply reply = shards()[i]->client().command({"KEYS", "*"});
    REQUIRE(reply.type == Reply::Type::Array);
    for (const auto& key : reply.elements) found.emplace(key.str, i);
    stored += reply.elements.size();
  }
  REQUIRE(stored == keys.size());  // each key on one shard only
  REQUIRE(found.size() == keys.size());
  return found;
}

void require_same_placement(const Pool& pool) {
  static const std::vector<std::string> keys = test_keys();
  auto actual = place_through_nutcracker(pool, keys);
  Placement santral(pool);

  std::vector<std::size_t> per_shard(shards().size());
  std::size_t mismatches = 0;
  std::string first_mismatches;
  for (const auto& key : keys) {
    std::size_t twemproxy = actual.at(key);
    std::size_t predicted = santral.shard_of(key);
    ++per_shard[twemproxy];
    if (predicted != twemproxy && ++mismatches <= 5) {
      first_mismatches += "  key \"" + printable(key) + "\": twemproxy shard " +
                          std::to_string(twemproxy) + ", Santral shard " +
                          std::to_string(predicted) + "\n";
    }
  }
  INFO("hash " << pool.hash << ", distribution " << pool.distribution << ", "
               << (pool.names.empty() ? "unnamed" : "named") << " servers"
               << (pool.hash_tag ? ", hash_tag {}" : "") << "\n"
               << first_mismatches);
  REQUIRE(mismatches == 0);

  // Not a vacuous pass: keys did spread. (crc32 only yields 0..32767, so under ketama it
  // piles onto the few points below 32768 - twemproxy behaves the same way.)
  if (!(pool.hash == "crc32" && pool.distribution == "ketama")) {
    CHECK(std::count_if(per_shard.begin(), per_shard.end(), [](auto n) { return n > 0; }) >= 2);
  }
}

std::vector<std::string> all_hash_names() {
  auto names = hash_function_names();
  return {names.begin(), names.end()};
}

}  // namespace

TEST_CASE("keys land on the shard twemproxy puts them on", "[twemproxy]") {
  const std::string hash = GENERATE(from_range(all_hash_names()));
  const std::string distribution = GENERATE(as<std::string>{}, "ketama", "modula");
  const bool named = GENERATE(true, false);

  Pool pool;
  pool.hash = hash;
  pool.distribution = distribution;
  if (named) pool.names.assign(kNames.begin(), kNames.end());
  pool.weights.assign(kWeights.begin(), kWeights.end());
  pool.hash_tag = named;  // tags on in half the runs: braces are plain bytes in the others
  require_same_placement(pool);
}

TEST_CASE("ketama with server names longer than twemproxy's point buffer", "[twemproxy]") {
  // "<name>-<n>" is cut to 272 bytes before hashing; these names are 270 and 280 bytes.
  Pool pool;
  pool.hash = "fnv1a_64";
  pool.distribution = "ketama";
  pool.names = {std::string(270, 'a'), std::string(280, 'b'), "c", "d"};
  pool.weights = {1, 1, 2, 1};
  require_same_placement(pool);
}
