// hotkeys.state_file: what a router alone keeps of its run-time salting, and how a damaged or
// unwritable file is refused.
#include <catch2/catch.hpp>

#include "router/hotkeys/salting/salting_state_file.h"
#include "tests/support/temp_dir.h"

using namespace santral;
using namespace santral::router;

namespace {

const SaltOverrides::Salting kEight{8, config::SaltReply::Exact, SaltedBy::Command};
const SaltOverrides::Salting kFour{4, config::SaltReply::Estimate, SaltedBy::Auto};

}  // namespace

TEST_CASE("a key kept in the salting state file is salted again by the next start") {
  test::TempDir dir;
  auto config = dir.write("santral.yaml", "");
  {
    SaltingStateFile file(config, "");
    CHECK(file.path() == config.string() + ".salting.json");
    CHECK(file.load().by_key.empty());  // no file: nothing kept
    CHECK(file.keep("hits", kEight).empty());
    CHECK(file.keep("auto", kFour).empty());
    file.forget("auto");  // folded
  }
  SaltingStateFile next(config, "");
  const auto& kept = next.load();
  REQUIRE(kept.by_key.size() == 1);
  CHECK(kept.by_key.at("hits")->salts == 8);
  CHECK(kept.by_key.at("hits")->reply == config::SaltReply::Exact);
  CHECK(kept.by_key.at("hits")->by == SaltedBy::Command);
}

TEST_CASE("the salting state file's place: relative to the config's folder, or absolute") {
  test::TempDir dir;
  auto config = dir.path() / "conf" / "santral.yaml";
  CHECK(SaltingStateFile(config, "state/salting.json").path() ==
        dir.path() / "conf" / "state" / "salting.json");
  CHECK(SaltingStateFile(config, "/var/lib/santral/salting.json").path() ==
        "/var/lib/santral/salting.json");
}

TEST_CASE("a damaged salting state file stops the start, naming the file and the field") {
  test::TempDir dir;
  auto config = dir.write("santral.yaml", "");
  dir.write("santral.yaml.salting.json", R"({"format": 1, "keys": {"hits": {"salts": 1}}})");
  SaltingStateFile file(config, "");
  try {
    file.load();
    FAIL("a damaged file was read");
  } catch (const SaltingStateFile::StartError& e) {
    std::string message = e.what();
    CHECK(message.find(config.string() + ".salting.json: field keys.hits.salts") == 0);
    CHECK(message.find("does not start without it") != std::string::npos);
  }
}

TEST_CASE("a salting state file that cannot be written refuses the key, naming the file") {
  test::TempDir dir;
  SaltingStateFile file(dir.path() / "no-such-folder" / "santral.yaml", "");
  auto error = file.keep("hits", kEight);
  CHECK(error.find(file.path().string() + ": cannot write") == 0);
  // Refused, so not kept: a later key writes a file without it once the folder exists.
  std::filesystem::create_directory(dir.path() / "no-such-folder");
  CHECK(file.keep("other", kFour).empty());
  SaltingStateFile next(dir.path() / "no-such-folder" / "santral.yaml", "");
  CHECK(next.load().by_key.count("hits") == 0);
  CHECK(next.load().by_key.count("other") == 1);
}
