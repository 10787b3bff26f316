#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace santral::router {

struct EtcdConnection;  // etcd_client.cpp

struct EtcdKeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t lease = 0;
};

struct EtcdRange {
  std::int64_t revision = 0;  // the store's revision when it was read
  std::vector<EtcdKeyValue> kvs;
};

// No member answered: what each one said ("127.0.0.1:2379: Connection refused; ...").
class EtcdUnavailable : public std::runtime_error {
 public:
  EtcdUnavailable(const std::string& what, bool all_down)
      : std::runtime_error(what), all_down_(all_down) {}
  // Every member refused the connection, or took it and then said nothing or that it has no
  // leader: etcd itself is down or without quorum, so no lease can expire meanwhile. Otherwise
  // some member could not be reached at all, or answered otherwise: this router may be cut off
  // from an etcd that works for others.
  bool all_down() const { return all_down_; }

 private:
  bool all_down_;
};

// A small blocking client of etcd v3's JSON gateway (/v3/kv, /v3/lease), one HTTP request per
// call over Boost.Beast, on a connection per member kept open between calls; keys and values are
// base64 on the wire. A call goes to the member that answered last and moves on to the next on
// failure; throws EtcdUnavailable when none answers. Not for the request path: the fleet's agent
// thread uses it (fleet_agent.h).
class EtcdClient {
 public:
  EtcdClient(std::vector<std::string> members, std::chrono::milliseconds timeout);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // `key`, or every key starting with it when `prefix`.
  EtcdRange range(std::string_view key, bool prefix = false);
  // Returns the revision the put made.
  std::int64_t put(std::string_view key, std::string_view value, std::int64_t lease = 0);
  // Puts `value` only while `key`'s mod_revision is `expected` (0: while it does not exist).
  // Returns the new revision, or nullopt when the key had changed.
  std::optional<std::int64_t> put_if(std::string_view key, std::string_view value,
                                     std::int64_t expected, std::int64_t lease = 0);
  void erase(std::string_view key);

  // A transaction: every compare holds, then the puts and deletes happen as one revision.
  struct Compare {
    std::string key;
    enum class Target { ModRevision, CreateRevision, Value, Lease } target = Target::ModRevision;
    // ModRevision, CreateRevision (0: the key does not exist); Lease: the lease's ID
    std::int64_t revision = 0;
    std::string value;  // Value
  };
  struct Put {
    std::string key, value;
    std::int64_t lease = 0;
  };
  // The revision it made, or nullopt when a compare failed. A txn sent twice (its kept
  // connection closed before the answer, so it went again) whose first send etcd had applied
  // fails its compare against its own write: then what etcd holds says so, and it counts as
  // made (every put's key holds its value, every deleted key is gone).
  std::optional<std::int64_t> txn(const std::vector<Compare>& compares,
                                  const std::vector<Put>& puts,
                                  const std::vector<std::string>& deletes);
  std::int64_t grant_lease(std::chrono::seconds ttl);  // the lease's ID
  bool keep_alive(std::int64_t lease);                 // false: the lease has expired
  void revoke(std::int64_t lease);
  // The cluster's members as etcd itself lists them (each one's client address, host:port),
  // whatever the configured addresses are (one of them may be a proxy or a load balancer).
  std::vector<std::string> member_list();
  // Whether `member`, asked alone (its status needs no quorum), has no leader: true when it
  // answered that it has none, false when it has one, nullopt when it did not answer. Only
  // answers count as proof; refusals, resets and timeouts prove nothing.
  std::optional<bool> leaderless(const std::string& member);

  const std::string& member() const { return members_[preferred_]; }  // the last that answered

 private:
  nlohmann::json call(std::string_view path, const nlohmann::json& body);
  nlohmann::json call_member(const std::string& member, std::string_view path,
                             const std::string& body);

  std::vector<std::string> members_;
  // One connection per member, kept open between calls (HTTP/1.1 keep-alive).
  std::map<std::string, std::unique_ptr<EtcdConnection>> connections_;
  std::chrono::milliseconds timeout_;
  std::size_t preferred_ = 0;
  int sends_ = 0;  // of the current call's request: more than one when it was sent again
};

}  // namespace santral::router
