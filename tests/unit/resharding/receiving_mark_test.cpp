// receiving_mark: the scripts a fleet's MIGRATEs go behind, as bytes (no shard runs them here).
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "router/resharding/migrate.h"
#include "router/resharding/receiving_mark.h"

using namespace santral;

namespace {

// The words of one RESP array of bulk strings.
std::vector<std::string> words(std::string_view resp) {
  std::vector<std::string> out;
  REQUIRE(resp.starts_with("*"));
  auto line_end = resp.find("\r\n");
  std::size_t count = std::stoul(std::string(resp.substr(1, line_end - 1)));
  std::size_t at = line_end + 2;
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(resp[at] == '$');
    auto end = resp.find("\r\n", at);
    std::size_t length = std::stoul(std::string(resp.substr(at + 1, end - at - 1)));
    out.emplace_back(resp.substr(end + 2, length));
    REQUIRE(resp.substr(end + 2 + length, 2) == "\r\n");
    at = end + 2 + length + 2;
  }
  CHECK(at == resp.size());
  return out;
}

config::Config config_of() {
  return config::parse_config(
      "shards:\n"
      "  - {name: shard0, address: 127.0.0.1:7000}\n"
      "  - {name: shard1, address: 127.0.0.1:7001}\n"
      "resharding: {migrate_timeout_ms: 1500}\n",
      "test.yaml");
}

}  // namespace

TEST_CASE("receiving_mark_holder is unique in the process") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) CHECK(seen.insert(router::receiving_mark_holder()).second);
}

TEST_CASE("mark_receiving and unmark_receiving: EVAL on the mark hash with the holder") {
  auto mark = words(router::mark_receiving("h1", std::chrono::milliseconds(2500), 5));
  REQUIRE(mark.size() == 7);
  CHECK(mark[0] == "EVAL");
  CHECK(mark[2] == "1");
  CHECK(mark[3] == router::kReceivingMarkKey);
  CHECK(mark[4] == "h1");
  CHECK(mark[5] == "2500");
  CHECK(mark[6] == "5");
  CHECK(mark[1].find("HSET") != std::string::npos);

  auto unmark = words(router::unmark_receiving("h1", 5));
  REQUIRE(unmark.size() == 6);
  CHECK(unmark[0] == "EVAL");
  CHECK(unmark[2] == "1");
  CHECK(unmark[3] == router::kReceivingMarkKey);
  CHECK(unmark[4] == "h1");
  CHECK(unmark[5] == "5");
  CHECK(unmark[1].find("HDEL") != std::string::npos);
}

TEST_CASE("migrate_unless_receiving carries migrate_arguments and the keys") {
  auto config = config_of();
  const auto& target = config.shards[1].address;
  std::vector<std::string_view> keys = {"a", "b{1}"};
  auto w = words(router::migrate_unless_receiving(config, target, 2, keys));
  auto head = router::migrate_arguments(config, target, 2);
  // EVAL script numkeys mark keys... db MIGRATE-words...
  REQUIRE(w.size() == 3 + 1 + keys.size() + 1 + head.size());
  CHECK(w[0] == "EVAL");
  CHECK(w[2] == std::to_string(1 + keys.size()));
  CHECK(w[3] == router::kReceivingMarkKey);
  CHECK(w[4] == "a");
  CHECK(w[5] == "b{1}");
  CHECK(w[6] == "2");
  CHECK(std::vector<std::string>(w.begin() + 7, w.end()) == head);
  // The script's refusal is what refused_as_receiving knows.
  auto refusal = w[1].find("TRYAGAIN santral: the source is receiving");
  REQUIRE(refusal != std::string::npos);
  auto quote = w[1].find('\'', refusal);
  CHECK(router::refused_as_receiving("-" + w[1].substr(refusal, quote - refusal) + "\r\n"));
}

TEST_CASE("refused_as_receiving knows the refusal alone") {
  CHECK_FALSE(router::refused_as_receiving("+OK\r\n"));
  CHECK_FALSE(router::refused_as_receiving("+NOKEY\r\n"));
  CHECK_FALSE(router::refused_as_receiving("-TRYAGAIN Multiple keys request during rehashing\r\n"));
  CHECK_FALSE(router::refused_as_receiving("-IOERR error or timeout\r\n"));
}
