#include "tests/support/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace santral::test {

FaultProxy::FaultProxy(const std::vector<std::pair<std::string, int>>& links) {
  auto ports_file = (dir_.path() / "ports").string();
  std::vector<std::string> argv = {
      "/usr/bin/python3", std::string(SANTRAL_SOURCE_DIR) + "/tests/support/fault_proxy.py",
      "--ports-file", ports_file};
  for (const auto& [name, port] : links) {
    argv.push_back("--link");
    argv.push_back(name + "=" + std::to_string(port));
  }
  process_ = std::make_unique<Process>(argv, (dir_.path() / "proxy.log").string());
  bool ready = wait_until(
      [&] {
        std::ifstream in(ports_file);
        std::string line, text;
        while (std::getline(in, line)) text += line + "\n";
        return text.find("ready") != std::string::npos;
      },
      10000);
  if (!ready) throw std::runtime_error("the fault proxy did not start: " + process_->log());
  std::ifstream in(ports_file);
  std::string word;
  while (in >> word) {
    if (word == "control") {
      in >> control_;
    } else if (word == "link") {
      std::string name, target;
      int listen = 0;
      in >> name >> listen >> target;
      ports_[name] = listen;
    }
  }
}

FaultProxy::~FaultProxy() = default;

int FaultProxy::accepted(const std::string& link) {
  auto status = command("STATUS " + link);
  auto at = status.find("accepted=");
  return at == std::string::npos ? -1 : std::stoi(status.substr(at + 9));
}

std::string FaultProxy::command(const std::string& line) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(control_));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot reach the fault proxy's control port");
  }
  std::string out = line + "\n";
  if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
    ::close(fd);
    throw std::runtime_error("cannot write to the fault proxy");
  }
  std::string reply;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') reply += c;
  ::close(fd);
  return reply;
}

void FaultProxy::fault(const std::string& link, const std::string& fault) {
  auto reply = command("FAULT " + link + " " + fault);
  if (reply.rfind("OK", 0) != 0)
    throw std::runtime_error("fault proxy refused '" + fault + "': " + reply);
}

}  // namespace santral::test
