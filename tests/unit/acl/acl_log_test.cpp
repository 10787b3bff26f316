#include <catch2/catch.hpp>

#include "router/runtime/acl_log.h"

using namespace santral::router;

namespace {

AclLogEntry denial(std::string object, std::chrono::steady_clock::time_point at) {
  AclLogEntry entry;
  entry.reason = AclLogReason::Command;
  entry.object = std::move(object);
  entry.username = "u";
  entry.created = at;
  return entry;
}

}  // namespace

TEST_CASE("acl log: like denials count on one entry, newest first") {
  AclLog log;
  auto now = std::chrono::steady_clock::now();
  log.add(denial("set", now));
  log.add(denial("del", now));
  log.add(denial("set", now + std::chrono::seconds(1)));
  auto entries = log.latest(10);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].object == "set");
  CHECK(entries[0].count == 2);
  CHECK(entries[1].object == "del");
  // A minute later it is a new entry.
  log.add(denial("set", now + std::chrono::seconds(62)));
  CHECK(log.latest(10).size() == 3);
  CHECK(log.latest(1).size() == 1);
  log.reset();
  CHECK(log.latest(10).empty());
}

TEST_CASE("acl log: at most 128 entries") {
  AclLog log;
  auto now = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) log.add(denial("cmd" + std::to_string(i), now));
  auto entries = log.latest(1000);
  CHECK(entries.size() == AclLog::kMaxEntries);
  CHECK(entries[0].object == "cmd199");
}
