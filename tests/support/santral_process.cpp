#include "tests/support/santral_process.h"

#include <sys/wait.h>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "tests/support/free_port.h"
#include "tests/support/test_outcome.h"

namespace santral::test {

std::string santral_binary() {
  const char* chosen = std::getenv("SANTRAL_BINARY");
  return chosen != nullptr && *chosen != '\0' ? chosen : SANTRAL_BINARY;
}

SantralProcess::SantralProcess(const std::string& config_yaml, std::vector<std::string> extra_args)
    : port_(free_loopback_port()) {
  std::string text = "listen: 127.0.0.1:" + std::to_string(port_) + "\n" + config_yaml;
  config_path_ = dir_.write("santral.yaml", text);
  launch(std::move(extra_args));
}

SantralProcess::SantralProcess(const std::string& config_yaml, SantralTls tls,
                               std::vector<std::string> extra_args)
    : port_(tls.plain_listener ? free_loopback_port() : -1), tls_(std::move(tls)) {
  std::string text = config_yaml;
  if (tls_->plain_listener) text = "listen: 127.0.0.1:" + std::to_string(port_) + "\n" + text;
  config_path_ = dir_.write("santral.yaml", text);
  launch(std::move(extra_args));
}

SantralProcess::SantralProcess(const std::filesystem::path& config_file, int port,
                               std::vector<std::string> extra_args)
    : port_(port), config_path_(config_file) {
  launch(std::move(extra_args));
}

SantralProcess::~SantralProcess() {
  if (!process_ || (!current_test_failed() && std::uncaught_exceptions() == 0)) return;
  constexpr std::size_t kTail = 12000;
  std::string text = process_->log();
  if (text.size() > kTail) text = "...\n" + text.substr(text.size() - kTail);
  std::cerr << "---- the end of Santral's log (" << config_path_.string() << ") ----\n"
            << text << "---- end of Santral's log ----\n";
}

void SantralProcess::launch(std::vector<std::string> extra_args) {
  std::vector<std::string> argv = {santral_binary(), "--config", config_path_.string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  process_ = std::make_unique<Process>(argv, (dir_.path() / "santral.log").string());
  bool up = wait_until(
      [&] {
        if (!process_->running()) return true;
        // Logged once every listener is bound: before it, a PONG may be another process's.
        if (process_->log_of_this_run().find(" listening on ") == std::string::npos) return false;
        if (tls_ && !answers_tls_ping(tls_->port, tls_->client)) return false;
        return port_ == -1 || answers_ping(port_);
      },
      10000);
  if (!up || !process_->running())
    throw std::runtime_error("santral did not start: " + process_->log());
}

std::string SantralProcess::config_for(const std::vector<const RedisServer*>& shards,
                                       const std::string& extra_yaml) {
  std::string text = "shards:\n";
  for (std::size_t i = 0; i < shards.size(); ++i) {
    text += "  - name: shard" + std::to_string(i) + "\n";
    text += "    address: " + shards[i]->address() + "\n";
  }
  return text + extra_yaml;
}

void rewrite(const SantralProcess& santral, const std::string& yaml) {
  std::ofstream(santral.config_path()) << "listen: 127.0.0.1:" << santral.port() << "\n" << yaml;
}

CommandResult run_santral(const std::vector<std::string>& args) {
  TempDir dir;
  std::vector<std::string> argv = {santral_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  auto log = (dir.path() / "out.log").string();
  Process process(argv, log);
  int status = process.wait(30000);
  if (status == -1) status = process.terminate();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, process.log()};
}

}  // namespace santral::test
