// A twemproxy user swaps nutcracker for Santral on the same nutcracker.yml: every key written
// through nutcracker is found through Santral, so no data has to move.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "tests/support/free_port.h"
#include "tests/support/nutcracker_process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

namespace {

std::string pool_yaml(int port, const std::vector<std::unique_ptr<RedisServer>>& servers,
                      const std::string& hash, const std::string& distribution, bool named,
                      bool tagged) {
  std::string text = fmt::format(
      "legacy:\n"
      "  listen: 127.0.0.1:{}\n"
      "  hash: {}\n"
      "  distribution: {}\n"
      "  redis: true\n"
      "  auto_eject_hosts: false\n"
      "  timeout: 2000\n"
      "  server_retry_timeout: 2000\n",
      port, hash, distribution);
  if (tagged) text += "  hash_tag: \"{}\"\n";
  text += "  servers:\n";
  for (std::size_t i = 0; i < servers.size(); ++i) {
    text += fmt::format("   - {}:{}", servers[i]->address(), i % 3 + 1);
    if (named) text += fmt::format(" cache-{}", i);
    text += "\n";
  }
  return text;
}

void check_migration(const std::string& hash, const std::string& distribution, bool named,
                     bool tagged) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  for (int i = 0; i < 4; ++i) servers.push_back(std::make_unique<RedisServer>());
  int port = free_loopback_port();
  TempDir dir;
  auto file =
      dir.write("nutcracker.yml", pool_yaml(port, servers, hash, distribution, named, tagged));
  constexpr int kKeys = 10000;
  auto key = [](int i) {
    return i % 10 == 0 ? fmt::format("{{tag{}}}:k{}", i % 7, i) : fmt::format("key:{}", i);
  };
  {
    std::ifstream in(file);
    NutcrackerProcess nutcracker(std::string(std::istreambuf_iterator<char>(in), {}), port);
    auto client = nutcracker.client();
    for (int i = 0; i < kKeys; ++i) client.append({"SET", key(i), "v" + std::to_string(i)});
    for (int i = 0; i < kKeys; ++i) REQUIRE(client.get_reply().is_ok());
  }  // nutcracker stops; Santral takes its port with the same file

  long long stored = 0;
  int shards_with_keys = 0;
  for (auto& s : servers) {
    stored += s->dbsize();
    shards_with_keys += s->dbsize() > 0;
  }
  REQUIRE(stored == kKeys);
  CHECK(shards_with_keys >= 2);

  SantralProcess santral(file, port);
  auto client = santral.client();
  for (int i = 0; i < kKeys; ++i) client.append({"GET", key(i)});
  int found = 0;
  for (int i = 0; i < kKeys; ++i) found += client.get_reply().str == "v" + std::to_string(i);
  CHECK(found == kKeys);
}

}  // namespace

TEST_CASE("twemproxy's default pool (fnv1a_64, ketama, named servers)") {
  check_migration("fnv1a_64", "ketama", true, false);
}

TEST_CASE("unnamed servers, murmur, modula and a hash tag") {
  check_migration("murmur", "modula", false, true);
}

TEST_CASE("md5 with ketama and a hash tag") {
  check_migration("md5", "ketama", false, true);
}
