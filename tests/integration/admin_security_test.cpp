// The admin listener's protection: HTTPS with the client side's certificate, and a refusal to
// listen beyond loopback without a token.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/certificates.h"
#include "tests/support/config_text.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tls_client.h"

using namespace santral::test;

TEST_CASE(
    "admin over HTTPS: curl verifying the CA gets JSON, a wrong token 401, plain HTTP nothing") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  int admin_port = free_loopback_port();
  std::string yaml = SantralProcess::config_for({&a}) +
                     "tls:\n"
                     "  listen: 127.0.0.1:" +
                     std::to_string(tls_port) +
                     "\n"
                     "  cert_file: " +
                     certs.server.cert_file.string() +
                     "\n"
                     "  key_file: " +
                     certs.server.key_file.string() +
                     "\n"
                     "admin:\n"
                     "  listen: 127.0.0.1:" +
                     std::to_string(admin_port) +
                     "\n"
                     "  token: t0k3n\n"
                     "  tls: true\n";
  TlsClientOptions trust;
  trust.ca_file = certs.ca.cert_file;
  SantralProcess santral(yaml, SantralTls{tls_port, trust});
  REQUIRE(santral.client().command({"SET", "k", "v"}).is_ok());

  auto stats = https_request(admin_port, "GET", "/stats", "t0k3n", certs.ca.cert_file.string());
  INFO(stats.body);
  REQUIRE(stats.status == 200);
  auto json = nlohmann::json::parse(stats.body);
  CHECK(json["config_version"] == 1);
  CHECK(json["total"]["commands"]["set"]["calls"] == 1);

  CHECK(https_request(admin_port, "GET", "/stats", "wrong", certs.ca.cert_file.string()).status ==
        401);
  CHECK(https_request(admin_port, "GET", "/stats", "", certs.ca.cert_file.string()).status == 401);
  // A client that does not trust the CA refuses the admin's certificate.
  CHECK(https_request(admin_port, "GET", "/stats", "t0k3n", certs.untrusted_ca.cert_file.string())
            .status == 0);

  // Plain HTTP to the HTTPS port gets no HTTP answer.
  bool plain_answered = false;
  try {
    plain_answered = http_request(admin_port, "GET", "/stats", "t0k3n").status != 0;
  } catch (const std::exception&) {
  }
  CHECK_FALSE(plain_answered);
  // And the admin listener is still there for HTTPS.
  CHECK(https_request(admin_port, "GET", "/shards", "t0k3n", certs.ca.cert_file.string()).status ==
        200);
}

TEST_CASE("an admin listener beyond loopback needs a token, unless explicitly allowed") {
  // --check-config validates without binding anything: 0.0.0.0 is only text here. The port is
  // a free one rather than 0, which the loader may not take.
  TempDir dir;
  std::string port = std::to_string(free_loopback_port());
  auto check = [&](const std::string& admin_yaml) {
    auto file = dir.write("admin.yaml", "listen: 127.0.0.1:7000\n" + kTwoShards + admin_yaml);
    return run_santral({"--check-config", file.string()});
  };
  auto refused = check("admin:\n  listen: 0.0.0.0:" + port + "\n");
  INFO(refused.output);
  CHECK(refused.exit_code == 1);
  CHECK(refused.output.find("admin.yaml:") != std::string::npos);  // names the file and line
  CHECK(refused.output.find("token") != std::string::npos);

  auto with_token = check("admin:\n  listen: 0.0.0.0:" + port + "\n  token: s3cret\n");
  INFO(with_token.output);
  CHECK(with_token.exit_code == 0);
  auto allowed =
      check("admin:\n  listen: 0.0.0.0:" + port + "\n  allow_remote_without_token: true\n");
  INFO(allowed.output);
  CHECK(allowed.exit_code == 0);
  auto loopback = check("admin:\n  listen: 127.0.0.1:" + port + "\n");
  INFO(loopback.output);
  CHECK(loopback.exit_code == 0);
}
