#include <catch2/catch.hpp>

#include "router/hotkeys/salting/salt_overrides_json.h"

using namespace santral;
using namespace santral::router;

TEST_CASE("run-time salting as the fleet shares it: changes made on the latest document") {
  std::string document = apply_salt_change(
      "", {"hits", SaltOverrides::Salting{8, config::SaltReply::Exact, SaltedBy::Command}, false});
  document = apply_salt_change(
      document,
      {"auto", SaltOverrides::Salting{4, config::SaltReply::Estimate, SaltedBy::Auto}, false});
  document = apply_salt_change(document, {"cold", std::nullopt, false});
  auto decoded = decode_salt_overrides("/santral/p/salting", document);
  REQUIRE(decoded.overrides);
  const auto& keys = decoded.overrides->by_key;
  REQUIRE(keys.size() == 3);
  CHECK(keys.at("hits")->salts == 8);
  CHECK(keys.at("hits")->reply == config::SaltReply::Exact);
  CHECK(keys.at("auto")->by == SaltedBy::Auto);
  CHECK_FALSE(keys.at("cold").has_value());
  // Forgetting a key drops its entry (automatic unsalting: as the config says).
  document = apply_salt_change(document, {"auto", std::nullopt, true});
  CHECK(decode_salt_overrides("k", document).overrides->by_key.size() == 2);
  CHECK(encode_salt_overrides(*decoded.overrides).find("\"hits\"") != std::string::npos);
}

TEST_CASE("a salting document that does not validate names the key and the field") {
  auto decoded = decode_salt_overrides("etcd key /santral/p/salting",
                                       R"({"format": 1, "keys": {"x": {"salts": 1}}})");
  CHECK_FALSE(decoded.overrides);
  CHECK(decoded.error.find("etcd key /santral/p/salting: field keys.x.salts: expected 2 to") == 0);
  CHECK(decode_salt_overrides("k", "nope").error.find("not a JSON object") != std::string::npos);
}
