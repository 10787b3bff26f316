#include "tests/support/nutcracker_process.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/free_port.h"

namespace santral::test {

NutcrackerProcess::NutcrackerProcess(const std::string& config_yaml, int port) : port_(port) {
  config_path_ = dir_.write("nutcracker.yml", config_yaml);
  std::vector<std::string> argv = {"nutcracker",
                                   "-c",
                                   config_path_.string(),
                                   "-s",
                                   std::to_string(free_loopback_port()),
                                   "-a",
                                   "127.0.0.1",
                                   "-o",
                                   (dir_.path() / "nutcracker.log").string()};
  process_ = std::make_unique<Process>(argv, (dir_.path() / "stdout.log").string());
  bool exited = false;
  bool up = wait_until(
      [&] {
        if (!process_->running()) return exited = true;  // stop waiting; reported below
        return answers_ping(port_);
      },
      10000);
  if (!up || exited) {
    // nutcracker writes why it stopped (e.g. a bad config directive) to its -o log only.
    std::ifstream log(dir_.path() / "nutcracker.log");
    std::stringstream text;
    text << log.rdbuf();
    throw std::runtime_error("nutcracker did not start: " + process_->log() + text.str());
  }
}

}  // namespace santral::test
