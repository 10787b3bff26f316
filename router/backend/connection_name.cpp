#include "router/backend/connection_name.h"

#include <chrono>
#include <random>

#include <fmt/format.h>

namespace santral::router {

namespace {

std::string& name() {
  static std::string value;
  return value;
}

std::string& prefix() {
  static std::string value;
  return value;
}

}  // namespace

void name_connections(const std::string& router) {
  if (router.empty()) {
    name().clear();
    prefix().clear();
    return;
  }
  // CLIENT SETNAME takes no spaces or line breaks.
  std::string clean = router;
  for (char& c : clean)
    if (c == ' ' || c == '\n' || c == '\r') c = '_';
  prefix() = "santral:" + clean + ":";
  auto run =
      (std::uint64_t{std::random_device{}()} << 32) ^
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  name() = fmt::format("{}{:016x}", prefix(), run);
}

const std::string& connection_name() {
  return name();
}

const std::string& connection_name_prefix() {
  return prefix();
}

}  // namespace santral::router
