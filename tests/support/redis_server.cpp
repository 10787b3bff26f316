#include "tests/support/redis_server.h"

#include <signal.h>

#include <stdexcept>

#include "tests/support/free_port.h"

namespace santral::test {

RedisServer::RedisServer(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)), port_(free_loopback_port()) {
  start();
}

RedisServer::RedisServer(RedisTls tls, std::vector<std::string> extra_args)
    : tls_(std::move(tls)), extra_args_(std::move(extra_args)), port_(free_loopback_port()) {
  start();
}

void RedisServer::start() {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   tls_ ? "0" : std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--dir",
                                   dir_.path().string(),
                                   "--daemonize",
                                   "no"};
  if (tls_) {
    argv.insert(argv.end(),
                {"--tls-port", std::to_string(port_), "--tls-cert-file", tls_->cert_file.string(),
                 "--tls-key-file", tls_->key_file.string(), "--tls-ca-cert-file",
                 tls_->ca_file.string(), "--tls-auth-clients", tls_->auth_clients ? "yes" : "no"});
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_ = std::make_unique<Process>(argv, (dir_.path() / "redis.log").string());
  bool exited = false;
  bool up = wait_until(
      [&] {
        // Exited (e.g. the port was taken meanwhile): a PONG now would come from someone else.
        if (!process_->running()) return exited = true;
        // Until this server says it listens, a PONG may come from another test's server that
        // took the same port first (this one then exits on "Address already in use").
        if (process_->log_of_this_run().find("Ready to accept connections") == std::string::npos)
          return false;
        return answers();
      },
      10000);
  if (!up || exited)
    throw std::runtime_error("redis-server did not start on port " + std::to_string(port_) + ": " +
                             process_->log());
}

void RedisServer::kill() {
  process_->signal(SIGKILL);
}

void RedisServer::restart() {
  process_.reset();
  start();
}

void RedisServer::pause() {
  process_->pause();
}
void RedisServer::resume() {
  process_->resume();
}

RedisClient RedisServer::client() const {
  if (tls_)
    throw std::logic_error("redis-server on port " + std::to_string(port_) +
                           " serves TLS only; use tls_client()");
  return RedisClient(port_);
}

TlsClientOptions RedisServer::own_tls_options() const {
  TlsClientOptions options;
  options.verify = false;
  if (tls_) {
    options.cert_file = tls_->client_cert_file;
    options.key_file = tls_->client_key_file;
  }
  return options;
}

TlsClient RedisServer::tls_client() const {
  return TlsClient(port_, own_tls_options());
}

bool RedisServer::answers() const {
  return tls_ ? answers_tls_ping(port_, own_tls_options()) : answers_ping(port_);
}

Reply RedisServer::command(const std::vector<std::string>& args) const {
  return tls_ ? tls_client().command(args) : client().command(args);
}

long long RedisServer::dbsize() const {
  return command({"DBSIZE"}).integer;
}

bool RedisServer::has_key(const std::string& key) const {
  return command({"EXISTS", key}).integer == 1;
}

long long RedisServer::command_calls(const std::string& command) const {
  std::string info = RedisServer::command({"INFO", "commandstats"}).str;
  std::string tag = "cmdstat_" + command + ":calls=";
  auto at = info.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + tag.size()));
}

}  // namespace santral::test
