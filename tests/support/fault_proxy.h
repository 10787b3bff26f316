#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace santral::test {

// tests/support/fault_proxy.py as a child process: one link per shard, each listening on a
// free loopback port and forwarding to the shard, with a fault switched at run time (pass,
// delay <ms>, stall, stall-new, reset, blackhole, refuse; the script's header says what each
// does). A test gives Santral the link's port as the shard's address.
class FaultProxy {
 public:
  // name -> the shard's port.
  explicit FaultProxy(const std::vector<std::pair<std::string, int>>& links);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port(const std::string& link) const { return ports_.at(link); }
  // FAULT <link|*> <fault ...>; throws when the proxy refuses it.
  void fault(const std::string& link, const std::string& fault);
  // One control command, its reply line ("OK ..." or "ERR ...").
  std::string command(const std::string& line);
  // The connections `link` has accepted so far (its STATUS); -1 when the proxy does not say.
  int accepted(const std::string& link);

 private:
  TempDir dir_;
  std::unique_ptr<Process> process_;
  int control_ = 0;
  std::map<std::string, int> ports_;
};

}  // namespace santral::test
