// router/cluster/put_on_version.h: a compare-and-set put that etcd did not answer is settled by
// sending it again and reading what etcd holds, never reported as "nothing changed".
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "router/cluster/etcd_client.h"
#include "router/cluster/put_on_version.h"

namespace {

using santral::router::EtcdKeyValue;
using santral::router::EtcdRange;
using santral::router::EtcdUnavailable;

// One key in a store of versions; a put can be made and then go unanswered (a timeout).
struct ScriptedEtcd {
  std::string value = "old";
  std::int64_t version = 7;
  int unanswered = 0;           // the next puts that are made (or not) but not answered
  bool make_unanswered = true;  // whether an unanswered put is made
  int puts = 0;

  std::optional<std::int64_t> put_if(std::string_view, std::string_view v, std::int64_t expected) {
    ++puts;
    bool made = expected == version;
    if (unanswered > 0) {
      --unanswered;
      if (made && make_unanswered) set(v);
      throw EtcdUnavailable("127.0.0.1:2379: The socket was closed due to a timeout", false);
    }
    if (!made) return std::nullopt;
    set(v);
    return version;
  }
  EtcdRange range(std::string_view key) const {
    EtcdRange r;
    r.revision = version;
    r.kvs.push_back(EtcdKeyValue{std::string(key), value, 1, version, 0});
    return r;
  }
  void set(std::string_view v) {
    value = v;
    ++version;
  }
};

TEST_CASE("put on version: answered, it is made once") {
  ScriptedEtcd etcd;
  std::int64_t revision = 0;
  CHECK(santral::router::put_on_version(etcd, "/m", "new", 7, revision).empty());
  CHECK(revision == 8);
  CHECK(etcd.value == "new");
  CHECK(etcd.puts == 1);
}

TEST_CASE("put on version: made but unanswered, it is found made, not reported failed") {
  ScriptedEtcd etcd;
  etcd.unanswered = 1;
  std::int64_t revision = 0;
  CHECK(santral::router::put_on_version(etcd, "/m", "new", 7, revision).empty());
  CHECK(revision == 8);
  CHECK(etcd.version == 8);  // made once: the second put's compare failed
  CHECK(etcd.puts == 2);
}

TEST_CASE("put on version: not made and unanswered, the second put makes it") {
  ScriptedEtcd etcd;
  etcd.unanswered = 1;
  etcd.make_unanswered = false;
  std::int64_t revision = 0;
  CHECK(santral::router::put_on_version(etcd, "/m", "new", 7, revision).empty());
  CHECK(revision == 8);
  CHECK(etcd.value == "new");
}

TEST_CASE("put on version: unanswered twice, the outcome is said to be unknown") {
  ScriptedEtcd etcd;
  etcd.unanswered = 2;
  std::int64_t revision = 0;
  auto error = santral::router::put_on_version(etcd, "/m", "new", 7, revision);
  CHECK(error.find("etcd did not answer, twice") != std::string::npos);
  CHECK(error.find("may still be made") != std::string::npos);
  CHECK(error.find("nothing changed") == std::string::npos);
}

TEST_CASE("put on version: another change first is refused, naming both versions") {
  ScriptedEtcd etcd;
  etcd.set("theirs");  // version 8
  std::int64_t revision = 0;
  auto error = santral::router::put_on_version(etcd, "/m", "new", 7, revision);
  CHECK(error.find("proposed on version 7") != std::string::npos);
  CHECK(error.find("made version 8") != std::string::npos);
  CHECK(etcd.value == "theirs");
}

}  // namespace
