#pragma once

#include <string>
#include <unordered_set>
#include <utility>

namespace santral::router {

// The Lua scripts one connection has loaded on its server since it connected (SCRIPT LOAD
// ahead of an EVALSHA keeps the EVALSHA in its place in the pipeline). A new connection may
// reach a new server process, which has none of them: forget() then.
class LoadedScripts {
 public:
  bool has(const std::string& sha) const { return shas_.contains(sha); }
  void loaded(std::string sha) { shas_.insert(std::move(sha)); }
  void lost(const std::string& sha) { shas_.erase(sha); }
  void forget() { shas_.clear(); }

 private:
  std::unordered_set<std::string> shas_;
};

}  // namespace santral::router
