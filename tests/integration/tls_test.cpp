// TLS on both sides: clients reach Santral over TLS (beside the plain port, or instead of it,
// with or without client certificates), Santral reaches TLS-only redis-server shards, verifies
// their certificates and names the reason when one fails, and reloads its own certificate
// without dropping connections. Certificates are made by the test with `openssl`.
//
// The cases tagged [fixtures] need no Santral: they prove the certificates, the TLS-only
// redis-server and the TLS client the other cases rely on.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "placement/shard_map.h"
#include "tests/support/certificates.h"
#include "tests/support/config_text.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/santral_process.h"
#include "tests/support/tls_client.h"

using namespace santral::test;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kQuickTimeouts =
    "timeouts:\n"
    "  connect_ms: 500\n"
    "  request_ms: 1000\n"
    "  reconnect_min_ms: 50\n"
    "  reconnect_max_ms: 200\n";

TlsClientOptions trusting(const std::filesystem::path& ca_file) {
  TlsClientOptions options;
  options.ca_file = ca_file;
  return options;
}

TlsClientOptions presenting(const std::filesystem::path& ca_file, const CertificateFiles& cert) {
  TlsClientOptions options = trusting(ca_file);
  options.cert_file = cert.cert_file;
  options.key_file = cert.key_file;
  return options;
}

// A TLS-only redis-server presenting `cert`, trusting `certs.ca` for client certificates.
std::unique_ptr<RedisServer> tls_shard(const TestCertificates& certs, const CertificateFiles& cert,
                                       bool auth_clients = false) {
  RedisTls tls;
  tls.cert_file = cert.cert_file;
  tls.key_file = cert.key_file;
  tls.ca_file = certs.ca.cert_file;
  tls.auth_clients = auth_clients;
  tls.client_cert_file = certs.client.cert_file;
  tls.client_key_file = certs.client.key_file;
  return std::make_unique<RedisServer>(tls);
}

// Connects, handshakes and gets PONG: a server can refuse a client certificate only after a
// TLS 1.3 handshake, on the first read, so a handshake alone proves nothing.
bool served(int port, const TlsClientOptions& options) {
  try {
    TlsClient client(port, options);
    return client.command({"PING"}).str == "PONG";
  } catch (const std::exception&) {
    return false;
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// shard0..N-1, with `tls: true` for the TLS-only servers.
std::string shards_yaml(const std::vector<const RedisServer*>& shards) {
  std::string text = "shards:\n";
  for (std::size_t i = 0; i < shards.size(); ++i) {
    text += "  - name: shard" + std::to_string(i) + "\n";
    text += "    address: " + shards[i]->address() + "\n";
    if (shards[i]->tls()) text += "    tls: true\n";
  }
  return text;
}

// Where keys live, from the same shard list without the TLS settings (placement depends on the
// shards' names and addresses, not on how Santral reaches them).
std::string key_on(const std::vector<const RedisServer*>& shards, std::size_t index,
                   const std::string& prefix = "k") {
  santral::placement::ShardMap map(load_config_text(SantralProcess::config_for(shards)));
  for (int n = 0;; ++n) {
    std::string key = prefix + std::to_string(n);
    if (map.shard_for_key(key) == index) return key;
  }
}

// Santral's client-side `tls:` block, with `extra` lines (two-space indented) added to it.
std::string client_tls_yaml(int port, const TestCertificates& certs, const std::string& extra = "",
                            const std::filesystem::path& cert_file = {},
                            const std::filesystem::path& key_file = {}) {
  return "tls:\n"
         "  listen: 127.0.0.1:" +
         std::to_string(port) +
         "\n"
         "  cert_file: " +
         (cert_file.empty() ? certs.server.cert_file : cert_file).string() +
         "\n"
         "  key_file: " +
         (key_file.empty() ? certs.server.key_file : key_file).string() +
         "\n"
         "  ca_file: " +
         certs.ca.cert_file.string() + "\n" + extra;
}

// `backend.tls`, trusting `certs.ca`, with `extra` lines (four-space indented) added to it.
std::string backend_tls_yaml(const TestCertificates& certs, const std::string& extra = "") {
  return "backend:\n"
         "  tls:\n"
         "    ca_file: " +
         certs.ca.cert_file.string() +
         "\n"
         "    server_name: localhost\n" +
         extra;
}

int count_lines_with(const std::string& text, const std::string& word) {
  int count = 0;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::transform(line.begin(), line.end(), line.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (contains(line, word)) ++count;
  }
  return count;
}

}  // namespace

// ---- The fixtures, without Santral ---------------------------------------------------------

TEST_CASE("the TLS test fixtures: a TLS-only redis-server answers a verified TLS client",
          "[fixtures]") {
  TestCertificates certs;
  auto shard = tls_shard(certs, certs.server);
  TlsClient client(shard->port(), trusting(certs.ca.cert_file));
  CHECK(client.command({"PING"}).str == "PONG");
  REQUIRE(client.command({"SET", "fixture", "value"}).is_ok());
  CHECK(client.command({"GET", "fixture"}).str == "value");
  client.append({"INCR", "n"});
  client.append({"INCR", "n"});
  CHECK(client.get_reply().integer == 1);
  CHECK(client.get_reply().integer == 2);
  auto array = client.command({"MGET", "fixture", "missing"});
  REQUIRE(array.type == Reply::Type::Array);
  CHECK(array.elements.at(0).str == "value");
  CHECK(array.elements.at(1).is_nil());
  // The fixture's own checks go over TLS too.
  CHECK(shard->has_key("fixture"));
  CHECK(shard->dbsize() == 2);
  CHECK(shard->command_calls("incr") == 2);
  // It serves TLS only: a plaintext client gets no answer, and a plain client is refused.
  CHECK_FALSE(answers_ping(shard->port()));
  CHECK_THROWS(shard->client());
  // The server closing a connection shows as such.
  client.send_raw("QUIT\r\n");
  std::string received;
  CHECK(client.wait_closed(received, 5000));
  CHECK(received == "+OK\r\n");
}

TEST_CASE("the TLS test fixtures: each bad certificate fails verification for its own reason",
          "[fixtures]") {
  TestCertificates certs;
  auto expired = tls_shard(certs, certs.expired);
  auto wrong_host = tls_shard(certs, certs.wrong_host);
  auto untrusted = tls_shard(certs, certs.untrusted);
  auto trust_ca = trusting(certs.ca.cert_file);

  auto why = TlsClient::handshake_error(expired->port(), trust_ca);
  INFO(why);
  CHECK(contains(why, "certificate verify failed"));
  CHECK(contains(why, "certificate has expired"));
  why = TlsClient::handshake_error(wrong_host->port(), trust_ca);
  INFO(why);
  CHECK(contains(why, "hostname mismatch"));
  why = TlsClient::handshake_error(untrusted->port(), trust_ca);
  INFO(why);
  CHECK(contains(why, "unable to get local issuer certificate"));

  // Each one is otherwise a good certificate: what fails is only what the check is about.
  CHECK(TlsClient::handshake_error(untrusted->port(), trusting(certs.untrusted_ca.cert_file)) ==
        "");
  auto other_name = trust_ca;
  other_name.server_name = "wrong.example";
  CHECK(TlsClient::handshake_error(wrong_host->port(), other_name) == "");
  auto anything = trust_ca;
  anything.verify = false;
  CHECK(TlsClient::handshake_error(expired->port(), anything) == "");
  // The server certificate also names 127.0.0.1.
  auto by_address = trust_ca;
  by_address.server_name = "127.0.0.1";
  auto good = tls_shard(certs, certs.server);
  TlsClient direct(good->port(), by_address);
  CHECK(direct.command({"PING"}).str == "PONG");
  CHECK(
      contains(TlsClient::handshake_error(wrong_host->port(), by_address), "IP address mismatch"));
}

TEST_CASE("the TLS test fixtures: a redis-server that requires client certificates", "[fixtures]") {
  TestCertificates certs;
  auto shard = tls_shard(certs, certs.server, /*auth_clients=*/true);
  CHECK(served(shard->port(), presenting(certs.ca.cert_file, certs.client)));
  CHECK_FALSE(served(shard->port(), trusting(certs.ca.cert_file)));
  CHECK_FALSE(served(shard->port(), presenting(certs.ca.cert_file, certs.untrusted)));
  CHECK(shard->dbsize() == 0);  // its own checks present the client certificate
}

// ---- Clients over TLS ------------------------------------------------------------------------

TEST_CASE("TLS clients and plain clients beside them see the same keys") {
  TestCertificates certs;
  RedisServer a, b;
  int tls_port = free_loopback_port();
  SantralProcess santral(shards_yaml({&a, &b}) + client_tls_yaml(tls_port, certs),
                         SantralTls{tls_port, trusting(certs.ca.cert_file)});
  auto plain = santral.client();
  auto tls = santral.tls_client();
  REQUIRE(plain.command({"SET", "from-plain", "p"}).is_ok());
  REQUIRE(tls.command({"SET", "from-tls", "t"}).is_ok());
  CHECK(tls.command({"GET", "from-plain"}).str == "p");
  CHECK(plain.command({"GET", "from-tls"}).str == "t");
  auto both = tls.command({"MGET", "from-plain", "from-tls"});
  REQUIRE(both.elements.size() == 2);
  CHECK(both.elements[0].str == "p");
  CHECK(both.elements[1].str == "t");
  CHECK(a.dbsize() + b.dbsize() == 2);  // they landed on the shards, once each

  // A TLS client on the plain port gets no TLS server; the plain port serves on.
  auto why = TlsClient::handshake_error(santral.port(), trusting(certs.ca.cert_file));
  INFO(why);
  CHECK_FALSE(why.empty());
  CHECK(plain.command({"PING"}).str == "PONG");
  CHECK(santral.client().command({"GET", "from-tls"}).str == "t");
}

TEST_CASE("with only tls.listen, Santral serves TLS only") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  SantralProcess santral(shards_yaml({&a}) + client_tls_yaml(tls_port, certs),
                         SantralTls{tls_port, trusting(certs.ca.cert_file), false});
  CHECK(santral.port() == -1);
  auto tls = santral.tls_client();
  REQUIRE(tls.command({"SET", "only-tls", "1"}).is_ok());
  CHECK(tls.command({"GET", "only-tls"}).str == "1");
  CHECK(a.has_key("only-tls"));
  CHECK_FALSE(answers_ping(tls_port));  // plaintext on the TLS port gets no answer
}

TEST_CASE("plaintext clients on the TLS port are closed, and the log says so without flooding") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  SantralProcess santral(shards_yaml({&a}) + client_tls_yaml(tls_port, certs),
                         SantralTls{tls_port, trusting(certs.ca.cert_file)});
  int before = count_lines_with(santral.log(), "handshake");
  auto started = Clock::now();
  constexpr int kClients = 50;
  std::vector<std::unique_ptr<RawConnection>> plaintext;
  for (int i = 0; i < kClients; ++i) {
    plaintext.push_back(std::make_unique<RawConnection>(tls_port));
    plaintext.back()->send("PING\r\n");
  }
  int closed = 0;
  for (auto& raw : plaintext) {
    std::string received;
    int left = static_cast<int>(std::max<long long>(
        100,
        10000 -
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()));
    if (raw->wait_closed(received, left) && !contains(received, "PONG")) ++closed;
  }
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - started).count();
  CHECK(closed == kClients);
  // The log says so ...
  REQUIRE(wait_until([&] { return count_lines_with(santral.log(), "handshake") > before; }, 5000));
  int lines = count_lines_with(santral.log(), "handshake") - before;
  INFO(lines << " log lines about the handshake for " << kClients << " clients in " << seconds
             << " s:\n"
             << santral.log());
  // ... at most a few lines a second, however many clients.
  CHECK(lines <= 10 + 3 * seconds);
  CHECK(lines < kClients / 2);
  // TLS and plain clients are served meanwhile.
  CHECK(santral.tls_client().command({"PING"}).str == "PONG");
  CHECK(santral.client().command({"PING"}).str == "PONG");
}

TEST_CASE("protocols: [TLSv1.3] refuses a client that offers only TLS 1.2") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  SantralProcess santral(
      shards_yaml({&a}) + client_tls_yaml(tls_port, certs, "  protocols: [TLSv1.3]\n"),
      SantralTls{tls_port, trusting(certs.ca.cert_file)});
  auto tls13 = trusting(certs.ca.cert_file);
  tls13.only_protocol = "TLSv1.3";
  auto tls12 = trusting(certs.ca.cert_file);
  tls12.only_protocol = "TLSv1.2";
  CHECK(served(tls_port, tls13));
  CHECK_FALSE(served(tls_port, tls12));
}

TEST_CASE("client_auth: required wants a certificate from the CA") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  auto with_cert = presenting(certs.ca.cert_file, certs.client);
  SantralProcess santral(
      shards_yaml({&a}) + client_tls_yaml(tls_port, certs, "  client_auth: required\n"),
      SantralTls{tls_port, with_cert});
  CHECK(served(tls_port, with_cert));
  CHECK_FALSE(served(tls_port, trusting(certs.ca.cert_file)));  // no certificate
  // A certificate from another CA is no better than none.
  CHECK_FALSE(served(tls_port, presenting(certs.ca.cert_file, certs.untrusted)));
  auto client = santral.tls_client();
  REQUIRE(client.command({"SET", "mutual", "yes"}).is_ok());
  CHECK(a.has_key("mutual"));
}

TEST_CASE("client_auth: optional serves clients with or without a certificate") {
  TestCertificates certs;
  RedisServer a;
  int tls_port = free_loopback_port();
  SantralProcess santral(
      shards_yaml({&a}) + client_tls_yaml(tls_port, certs, "  client_auth: optional\n"),
      SantralTls{tls_port, trusting(certs.ca.cert_file)});
  CHECK(served(tls_port, trusting(certs.ca.cert_file)));
  CHECK(served(tls_port, presenting(certs.ca.cert_file, certs.client)));
  // As Redis's tls-auth-clients optional: a certificate that is presented must be valid.
  CHECK_FALSE(served(tls_port, presenting(certs.ca.cert_file, certs.untrusted)));
}

TEST_CASE("a certificate reload: new handshakes use the new files, open TLS connections stay") {
  TestCertificates certs;
  RedisServer a;
  TempDir live;
  auto cert_file = live.path() / "live.crt";
  auto key_file = live.path() / "live.key";
  auto install = [&](const CertificateFiles& files) {
    std::filesystem::copy_file(files.cert_file, cert_file,
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(files.key_file, key_file,
                               std::filesystem::copy_options::overwrite_existing);
  };
  install(certs.server);
  int tls_port = free_loopback_port();
  SantralProcess santral(shards_yaml({&a}) + "watch_file: false\n" +
                             client_tls_yaml(tls_port, certs, "", cert_file, key_file),
                         SantralTls{tls_port, trusting(certs.ca.cert_file)});
  auto trust_old = trusting(certs.ca.cert_file);
  auto trust_new = trusting(certs.untrusted_ca.cert_file);
  auto before = santral.tls_client();
  REQUIRE(before.command({"SET", "reload", "kept"}).is_ok());
  CHECK_FALSE(served(tls_port, trust_new));

  // SANTRAL RELOAD, sent over the connection opened before it.
  install(certs.untrusted);
  auto reload = before.command({"SANTRAL", "RELOAD"});
  INFO(reload.str);
  CHECK_FALSE(reload.is_error());
  CHECK(wait_until([&] { return served(tls_port, trust_new); }, 5000));
  CHECK_FALSE(served(tls_port, trust_old));
  CHECK(before.command({"GET", "reload"}).str == "kept");

  // SIGHUP takes the same path, back to the first CA's certificate.
  auto during = TlsClient(tls_port, trust_new);
  install(certs.server);
  ::kill(santral.process().pid(), SIGHUP);
  CHECK(wait_until([&] { return served(tls_port, trust_old); }, 5000));
  CHECK_FALSE(served(tls_port, trust_new));
  CHECK(before.command({"PING"}).str == "PONG");
  CHECK(during.command({"GET", "reload"}).str == "kept");
  CHECK(santral.process().running());
}

// ---- Shards over TLS -------------------------------------------------------------------------

TEST_CASE("shards over TLS: a SET lands on its TLS-only shard, MGET spans two of them") {
  TestCertificates certs;
  auto a = tls_shard(certs, certs.server);
  auto b = tls_shard(certs, certs.server);
  std::vector<const RedisServer*> shards{a.get(), b.get()};
  SantralProcess santral(shards_yaml(shards) + backend_tls_yaml(certs, "    verify: true\n"));
  auto client = santral.client();
  std::string on_a = key_on(shards, 0);
  std::string on_b = key_on(shards, 1);
  auto set_a = client.command({"SET", on_a, "value-a"});
  INFO(set_a.str);
  REQUIRE(set_a.is_ok());
  auto set_b = client.command({"SET", on_b, "value-b"});
  INFO(set_b.str);
  REQUIRE(set_b.is_ok());
  // Read back from each shard directly, by a client that verifies it.
  auto direct_a = a->tls_client(trusting(certs.ca.cert_file));
  auto direct_b = b->tls_client(trusting(certs.ca.cert_file));
  CHECK(direct_a.command({"GET", on_a}).str == "value-a");
  CHECK(direct_b.command({"GET", on_b}).str == "value-b");
  CHECK(direct_a.command({"EXISTS", on_b}).integer == 0);
  CHECK(direct_b.command({"EXISTS", on_a}).integer == 0);
  auto both = client.command({"MGET", on_a, on_b, "nosuch"});
  REQUIRE(both.elements.size() == 3);
  CHECK(both.elements[0].str == "value-a");
  CHECK(both.elements[1].str == "value-b");
  CHECK(both.elements[2].is_nil());
  CHECK(a->command_calls("mget") + b->command_calls("mget") + a->command_calls("get") +
            b->command_calls("get") >=
        2);
}

TEST_CASE("a shard whose certificate fails verification is down, with OpenSSL's reason") {
  TestCertificates certs;
  auto healthy = tls_shard(certs, certs.server);
  auto expired = tls_shard(certs, certs.expired);
  auto wrong_host = tls_shard(certs, certs.wrong_host);
  auto untrusted = tls_shard(certs, certs.untrusted);
  std::vector<const RedisServer*> shards{healthy.get(), expired.get(), wrong_host.get(),
                                         untrusted.get()};
  int admin_port = free_loopback_port();
  SantralProcess santral(shards_yaml(shards) + backend_tls_yaml(certs) + kQuickTimeouts +
                         "admin:\n  listen: 127.0.0.1:" + std::to_string(admin_port) +
                         "\n  token: t\n");
  auto client = santral.client();

  // The healthy TLS shard serves its keys.
  std::string good = key_on(shards, 0);
  REQUIRE(client.command({"SET", good, "ok"}).is_ok());
  CHECK(client.command({"GET", good}).str == "ok");
  CHECK(healthy->has_key(good));

  struct Case {
    std::size_t shard;
    std::vector<std::string> reasons;  // any one of them
  };
  for (const Case& c :
       {Case{1, {"certificate has expired"}}, Case{2, {"hostname mismatch"}},
        Case{3, {"unable to get local issuer certificate", "certificate verify failed"}}}) {
    std::string name = "shard" + std::to_string(c.shard);
    INFO(name << " should be down for: " << c.reasons.front());
    auto says_why = [&](const std::string& text) {
      return std::any_of(c.reasons.begin(), c.reasons.end(),
                         [&](const std::string& r) { return contains(text, r); });
    };
    // Its keys get the down-shard error, naming it.
    std::string key = key_on(shards, c.shard);
    auto reply = client.command({"SET", key, "v"});
    INFO(reply.str);
    CHECK(reply.is_error());
    CHECK(contains(reply.str, "'" + name + "'"));
    CHECK(shards[c.shard]->dbsize() == 0);
    // /shards: every connection to it down, with the reason.
    nlohmann::json view;
    bool reported = wait_until(
        [&] {
          auto response = http_request(admin_port, "GET", "/shards", "t");
          if (response.status != 200) return false;
          view = nlohmann::json::parse(response.body);
          for (const auto& shard : view["shards"]) {
            if (shard["name"] != name || shard["servers"].empty()) continue;
            return std::all_of(shard["servers"].begin(), shard["servers"].end(),
                               [&](const nlohmann::json& server) {
                                 return server["state"] == "down" &&
                                        says_why(server["reason"].get<std::string>());
                               });
          }
          return false;
        },
        5000);
    INFO(view.dump(2));
    CHECK(reported);
    // And the log.
    CHECK(wait_until([&] { return says_why(santral.log()); }, 5000));
  }
  // The healthy shard was never disturbed.
  CHECK(client.command({"GET", good}).str == "ok");
  auto mixed = client.command({"MGET", good, key_on(shards, 1)});
  CHECK((mixed.is_error() || (mixed.elements.size() == 2 && mixed.elements[0].str == "ok")));
}

TEST_CASE("verify: false accepts a shard whose certificate comes from an untrusted CA") {
  TestCertificates certs;
  auto untrusted = tls_shard(certs, certs.untrusted);
  SantralProcess santral(shards_yaml({untrusted.get()}) +
                         backend_tls_yaml(certs, "    verify: false\n") + kQuickTimeouts);
  auto client = santral.client();
  REQUIRE(client.command({"SET", "unverified", "accepted"}).is_ok());
  CHECK(client.command({"GET", "unverified"}).str == "accepted");
  CHECK(untrusted->has_key("unverified"));
}

TEST_CASE("mutual TLS to a shard that requires client certificates") {
  TestCertificates certs;
  auto shard = tls_shard(certs, certs.server, /*auth_clients=*/true);
  std::vector<const RedisServer*> shards{shard.get()};

  SECTION("with backend.tls cert_file and key_file the shard serves") {
    SantralProcess santral(
        shards_yaml(shards) +
        backend_tls_yaml(certs, "    cert_file: " + certs.client.cert_file.string() +
                                    "\n    key_file: " + certs.client.key_file.string() + "\n") +
        kQuickTimeouts);
    auto client = santral.client();
    REQUIRE(client.command({"SET", "mutual", "1"}).is_ok());
    CHECK(client.command({"GET", "mutual"}).str == "1");
    CHECK(shard->has_key("mutual"));
  }
  SECTION("without a client certificate it does not") {
    SantralProcess santral(shards_yaml(shards) + backend_tls_yaml(certs) + kQuickTimeouts);
    auto client = santral.client();
    for (int i = 0; i < 5; ++i) {
      auto reply = client.command({"SET", "refused", "1"});
      INFO(reply.str);
      CHECK(reply.is_error());
      CHECK(contains(reply.str, "'shard0'"));
    }
    CHECK(shard->dbsize() == 0);
  }
}
