#include "tests/support/redis_server.h"

#include <signal.h>

#include <stdexcept>

#include "tests/support/free_port.h"

namespace santral::test {

RedisServer::RedisServer(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)), port_(free_loopback_port()) {
  start();
}

void RedisServer::start() {
  std::vector<std::string> argv = {"redis-server",
                                   "--port",
                                   std::to_string(port_),
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
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_ = std::make_unique<Process>(argv, (dir_.path() / "redis.log").string());
  bool exited = false;
  bool up = wait_until(
      [&] {
        // Exited (e.g. the port was taken meanwhile): a PONG now would come from someone else.
        if (!process_->running()) return exited = true;
        return answers_ping(port_);
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

long long RedisServer::dbsize() const {
  return client().command({"DBSIZE"}).integer;
}

bool RedisServer::has_key(const std::string& key) const {
  return client().command({"EXISTS", key}).integer == 1;
}

long long RedisServer::command_calls(const std::string& command) const {
  std::string info = client().command({"INFO", "commandstats"}).str;
  std::string tag = "cmdstat_" + command + ":calls=";
  auto at = info.find(tag);
  if (at == std::string::npos) return 0;
  return std::stoll(info.substr(at + tag.size()));
}

}  // namespace santral::test
