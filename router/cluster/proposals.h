#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <variant>

#include "router/cluster/etcd_client.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace santral::router {

// The server's changes to the fleet's keys, queued from any thread and carried out as
// compare-and-swaps on the fleet agent's thread, one after another; each answer is posted back
// to the server's thread.
class Proposals {
 public:
  // The new revision, or an error for the client (etcd unreachable, changed meanwhile).
  using Done = std::function<void(std::int64_t revision, std::string error)>;
  // What an Update makes of the key's value ("" when absent); runs on the agent's thread.
  using Change = std::function<std::string(const std::string& current)>;
  // "" or an error, and the revision it made.
  using Action = std::function<std::string(EtcdClient& etcd, std::int64_t& revision)>;

  // `value` at `key` while its mod_revision is still `expected`.
  struct Put {
    std::string key, value;
    std::int64_t expected = 0;
  };
  // What `change` makes of `key`'s value, tried again when another router changed it meanwhile.
  struct Update {
    std::string key;
    Change change;
  };
  // Runs with the agent's etcd client (a move's compare-and-swaps).
  struct Call {
    Action action;
  };
  using Proposal = std::variant<Put, Update, Call>;

  void add(Proposal proposal, Done done);  // any thread
  // Carries out what was queued, posting each answer to `home`; how many there were.
  std::size_t carry_out(EtcdClient& etcd, boost::asio::io_context& home);

 private:
  struct Job {
    Proposal proposal;
    Done done;
  };

  std::mutex mutex_;  // guards jobs_
  std::deque<Job> jobs_;
};

}  // namespace santral::router
