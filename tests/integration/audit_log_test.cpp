// The audit log (`audit:`): a scripted sequence of operator actions through the RESP listener,
// the admin API and a signal yields exactly one JSON line per action, naming who (user,
// address, router), what and the outcome; reads and ordinary traffic yield none. Off by
// default; a file past audit.max_bytes is rotated.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"

using namespace santral::test;
using nlohmann::json;

namespace {

constexpr const char* kToken = "audit-test-token";

std::vector<json> audit_lines(const std::filesystem::path& file) {
  std::vector<json> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(json::parse(line));
  return lines;
}

std::string users_yaml(bool with_reporter) {
  std::string yaml =
      "users:\n"
      "  - name: ops\n"
      "    password: ops-pw\n"
      "  - name: app\n"
      "    password: app-pw\n"
      "    rules: \"on +@all ~app:*\"\n";
  if (with_reporter) yaml += "  - name: reporter\n    password: rep-pw\n";
  return yaml;
}

// "127.0.0.1:<port>" of a connection, as the client itself sees it (CLIENT INFO's laddr is
// Santral's side; the audit log names the client's, CLIENT INFO's addr).
std::string client_address(RedisClient& client) {
  std::string info = client.command({"CLIENT", "INFO"}).str;
  auto at = info.find("addr=");
  REQUIRE(at != std::string::npos);
  return info.substr(at + 5, info.find(' ', at) - at - 5);
}

}  // namespace

TEST_CASE("audit log: one line per operator action, with who, what and the outcome") {
  RedisServer a, b;
  TempDir dir;
  auto log_file = dir.path() / "audit.log";
  int admin_port = free_loopback_port();
  std::string rest = "admin:\n  listen: 127.0.0.1:" + std::to_string(admin_port) +
                     "\n  token: " + kToken + "\naudit:\n  path: " + log_file.string() +
                     "\nwatch_file: false\n";  // reloads only when asked
  const std::string config_text = SantralProcess::config_for({&a, &b}, users_yaml(false) + rest);
  SantralProcess santral(config_text);

  auto ops = santral.client();
  // 1. a wrong password
  CHECK(ops.command({"AUTH", "ops", "wrong"}).is_error());
  REQUIRE(ops.command({"AUTH", "ops", "ops-pw"}).is_ok());  // a success is not an action
  std::string ops_address = client_address(ops);
  // Ordinary traffic and reads are not actions.
  REQUIRE(ops.command({"SET", "app:1", "v"}).is_ok());
  REQUIRE(ops.command({"SANTRAL", "RESHARD", "STATUS"}).type == Reply::Type::Array);
  REQUIRE(ops.command({"ACL", "LOG"}).type == Reply::Type::Array);
  // 2. salted; 3. refused: already salted; 4. unsalted
  REQUIRE(ops.command({"SANTRAL", "SALT", "hits", "4"}).is_ok());
  CHECK(ops.command({"SANTRAL", "SALT", "hits", "4"}).is_error());
  REQUIRE(ops.command({"SANTRAL", "UNSALT", "hits"}).is_ok());
  // 5. a reload through the RESP listener that adds a user
  {
    std::ofstream out(santral.config_path(), std::ios::trunc);
    out << "listen: 127.0.0.1:" << santral.port() << "\n"
        << SantralProcess::config_for({&a, &b}, users_yaml(true) + rest);
  }
  auto reloaded = ops.command({"SANTRAL", "RELOAD"});
  INFO(reloaded.str);
  REQUIRE(reloaded.str.rfind("OK", 0) == 0);
  // 6. a reload through the admin API
  REQUIRE(http_request(admin_port, "POST", "/reload", kToken).status == 200);
  REQUIRE(http_request(admin_port, "GET", "/reshard", kToken).status == 200);  // a read
  // 7. approving a move when none is planned
  CHECK(ops.command({"SANTRAL", "RESHARD", "APPROVE"}).is_error());
  // 8. aborting one through the admin API
  http_request(admin_port, "POST", "/reshard/abort", kToken);
  // 9. a map push outside a fleet
  CHECK(ops.command({"SANTRAL", "MAP", "PUSH", config_text}).is_error());
  // 10. an ACL denial
  auto app = santral.client();
  REQUIRE(app.command({"AUTH", "app", "app-pw"}).is_ok());
  std::string app_address = client_address(app);
  CHECK(app.command({"GET", "app:1"}).str == "v");
  CHECK(app.command({"GET", "secret:1"}).is_error());
  // 11. ACL LOG RESET
  REQUIRE(ops.command({"ACL", "LOG", "RESET"}).is_ok());
  // 12. SIGHUP
  REQUIRE(::kill(santral.process().pid(), SIGHUP) == 0);

  constexpr std::size_t kActions = 12;
  std::vector<json> lines;
  REQUIRE(wait_until(
      [&] {
        lines = audit_lines(log_file);
        return lines.size() >= kActions;
      },
      10000));
  // Nothing more comes: one more ordinary command, and the count stays.
  REQUIRE(ops.command({"PING"}).str == "PONG");
  lines = audit_lines(log_file);
  for (const auto& line : lines) INFO(line.dump());
  REQUIRE(lines.size() == kActions);

  struct Expected {
    std::string action, via, user, address, command;
    bool ok;
  };
  const std::vector<Expected> expected = {
      {"acl.auth_failed", "resp", "default", ops_address, "AUTH ops", false},
      {"salt", "resp", "ops", ops_address, "SANTRAL SALT hits 4", true},
      {"salt", "resp", "ops", ops_address, "SANTRAL SALT hits 4", false},
      {"unsalt", "resp", "ops", ops_address, "SANTRAL UNSALT hits", true},
      {"config.reload", "resp", "ops", ops_address, "SANTRAL RELOAD", true},
      {"config.reload", "http", "admin.token", "", "POST /reload", true},
      {"move.approve", "resp", "ops", ops_address, "SANTRAL RESHARD APPROVE", false},
      {"move.abort", "http", "admin.token", "", "POST /reshard/abort", false},
      {"map.push", "resp", "ops", ops_address, "", false},
      {"acl.denied", "resp", "app", app_address, "get", false},
      {"acl.log_reset", "resp", "ops", ops_address, "ACL LOG RESET", true},
      {"config.reload", "signal", "", "", "SIGHUP", true},
  };
  std::string router;
  for (std::size_t i = 0; i < kActions; ++i) {
    const auto& line = lines[i];
    const auto& want = expected[i];
    INFO("line " << i << ": " << line.dump());
    CHECK(line["action"] == want.action);
    CHECK(line["via"] == want.via);
    CHECK(line["user"] == want.user);
    if (want.via == "http")
      CHECK(line["address"].get<std::string>().starts_with("127.0.0.1:"));
    else
      CHECK(line["address"] == want.address);
    if (!want.command.empty()) CHECK(line["command"] == want.command);
    CHECK(line["ok"] == want.ok);
    CHECK(line["time"].get<std::string>().ends_with("Z"));
    CHECK_FALSE(line["outcome"].get<std::string>().empty());
    // Every line names the router, the same one.
    if (router.empty()) router = line["router"];
    CHECK(line["router"] == router);
  }
  CHECK(router.starts_with("127.0.0.1:" + std::to_string(santral.port())));
  // What each says of its outcome.
  CHECK(lines[2]["outcome"].get<std::string>().find("already salted") != std::string::npos);
  CHECK(lines[4]["acl"] == "added: reporter");
  CHECK_FALSE(lines[5].contains("acl"));  // the second reload changed no user
  CHECK(lines[8]["command"].get<std::string>().starts_with("SANTRAL MAP PUSH"));
  CHECK(lines[8]["outcome"].get<std::string>().find("fleet") != std::string::npos);
  CHECK(lines[9]["outcome"].get<std::string>().find("NOPERM") != std::string::npos);
  // No password is ever written.
  std::ifstream in(log_file);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("ops-pw") == std::string::npos);
  CHECK(text.str().find("wrong") == std::string::npos);
}

TEST_CASE("audit log: off by default; rotated past audit.max_bytes") {
  RedisServer a;
  TempDir dir;
  SECTION("off: no file, nothing on the way") {
    SantralProcess santral(SantralProcess::config_for({&a}));
    auto client = santral.client();
    REQUIRE(client.command({"SANTRAL", "SALT", "hits", "2"}).is_ok());
    CHECK(std::filesystem::is_empty(dir.path()));
    CHECK(santral.log().find("\"action\"") == std::string::npos);
  }
  SECTION("rotated") {
    auto log_file = dir.path() / "audit.log";
    SantralProcess santral(SantralProcess::config_for(
        {&a}, "audit: {path: " + log_file.string() + ", max_bytes: 4kb, max_files: 2}\n"));
    auto client = santral.client();
    REQUIRE(client.command({"SANTRAL", "SALT", "hits", "2"}).is_ok());
    for (int i = 0; i < 40; ++i) CHECK(client.command({"SANTRAL", "SALT", "hits", "2"}).is_error());
    CHECK(std::filesystem::exists(dir.path() / "audit.1.log"));
    CHECK(std::filesystem::file_size(log_file) <= 4096);
    auto kept = audit_lines(log_file);
    REQUIRE_FALSE(kept.empty());
    CHECK(kept.back()["action"] == "salt");
  }
}
