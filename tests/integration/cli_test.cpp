// The santral command line: --version, --help, --check-config.
#include <catch2/catch.hpp>

#include <filesystem>

#include "santral/version.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;

TEST_CASE("--version and --help") {
  auto version = run_santral({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.output.find(santral::kVersion) != std::string::npos);
  auto help = run_santral({"--help"});
  CHECK(help.exit_code == 0);
  for (const char* option :
       {"--config", "--check-config", "--log-level", "--version", "--format", "--pool"})
    CHECK(help.output.find(option) != std::string::npos);
}

TEST_CASE("--check-config accepts every example config") {
  for (const auto& entry :
       std::filesystem::directory_iterator(SANTRAL_SOURCE_DIR "/config/examples")) {
    INFO(entry.path());
    auto result = run_santral({"--check-config", entry.path().string()});
    INFO(result.output);
    CHECK(result.exit_code == 0);
    CHECK(result.output.find("config OK") != std::string::npos);
  }
}

TEST_CASE("--check-config rejects a bad config naming file, line and key") {
  TempDir dir;
  auto file = dir.write("broken.yaml",
                        "listen: 127.0.0.1:7000\n"
                        "shards:\n"
                        "  - name: a\n"
                        "    address: 127.0.0.1:not-a-port\n");
  auto result = run_santral({"--check-config", file.string()});
  CHECK(result.exit_code == 1);
  CHECK(result.output.find(file.string() + ":4: shards[0].address: expected host:port") !=
        std::string::npos);
}

TEST_CASE("serving a bad config fails at start with the same message") {
  TempDir dir;
  auto file = dir.write("broken.yaml", "shards:\n  - name: a\n    adress: 127.0.0.1:1\n");
  auto result = run_santral({"--config", file.string()});
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("broken.yaml:3: shards[0].adress: unknown key") != std::string::npos);
}

TEST_CASE("usage errors") {
  CHECK(run_santral({}).exit_code != 0);
  CHECK(run_santral({"--no-such-flag"}).exit_code != 0);
  CHECK(run_santral({"--log-level", "loud", "--config", "x"}).exit_code != 0);
}
