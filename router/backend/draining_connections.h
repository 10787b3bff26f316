#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "router/backend/backend_connection.h"
#include "router/backend/proof_patience.h"
#include "router/metrics/stats.h"
#include "router/transport/stream.h"

namespace santral::router {

// A timeout is not a "no". A shard that stalls (a fork for BGSAVE, a big DEL, a slow script, a
// paused VM) runs every byte already in its socket buffer when it wakes, whatever Santral's
// timeout said meanwhile. So a connection Santral gives up on with requests on the wire (a
// timeout, a lost connection, one stopped while it carried requests) is *draining* until its
// shard proves that nothing more from it will run: by answering `CLIENT KILL ID <id>` sent on
// another connection (Redis frees that client and never reads its unread input; it answers :0
// for one gone already), or by answering every request on it: a plain connection's socket is
// kept open and read until then. What needs "nothing sent before now can still run" (a move's
// switch of direction, the migration gate, an UNSALT fold's step sent again) waits here for that
// proof; it never takes a timeout for one.
//
//   given up ──► draining ──CLIENT KILL ID n, on a connection of its own──► :1 / :0 ──► proven
//                   │  │                (no deadline: a stalled shard answers when it wakes)
//                   │  ├─ that connection breaks, or the shard is down: the kill is sent again
//                   │  └─ unanswered for a while: sent again on a new connection (a link that
//                   │     lost it without a close, a half-open TCP connection, never answers)
//                   └──── its own socket, still read: every request on it answered ──► proven
//
// One per io_context (an Asio service): every connection lives on one loop (a worker's or the
// server's), and so do the fences that wait for its requests.
class DrainingConnections final : public boost::asio::execution_context::service {
 public:
  using key_type = DrainingConnections;
  static inline boost::asio::execution_context::id id;

  explicit DrainingConnections(boost::asio::io_context& io);
  ~DrainingConnections() override;

  static DrainingConnections& of(boost::asio::io_context& io);

  // What a connection given up on still holds: its plain TCP socket, read on for the answers
  // to the requests on it, and the bytes of the first of them read so far.
  struct Socket {
    boost::asio::ip::tcp::socket socket;
    std::size_t unanswered;
    std::string read;
  };
  // What of a connection given up on is read on: a plain socket (`stream`'s, taken, still
  // open) that `answers` each request on it, until every one of its `unanswered` requests is
  // answered (one proof). A TLS one, or a subscriber's (whose pushes are not answers), is left
  // to be closed: only the kill proves it over. `read`: the bytes of its next reply read so far.
  static std::optional<Socket> take_socket(Stream& stream, bool answers, std::size_t unanswered,
                                           std::string read);
  // `client_id` (its CLIENT ID on the server; 0 when the server refused to say) gave up on
  // requests that may have reached `target`'s server: draining until proven.
  void add(const BackendTarget& target, std::uint64_t client_id,
           std::shared_ptr<const config::Config> config, std::string why,
           std::optional<Socket> socket = std::nullopt);

  // Runs `proven` (on this loop) once every connection to `address` (config::Endpoint::text())
  // draining now is proven: at once when none is. after_all: to any server.
  void after(const std::string& address, std::function<void()> proven);
  void after_all(std::function<void()> proven);
  // Whether a connection to `address` is draining now.
  bool draining(const std::string& address) const;

  // What is draining now, for SANTRAL RESHARD STATUS and the log.
  struct Draining {
    std::string shard;
    std::string address;
    std::uint64_t client_id;
    std::string why;  // what Santral gave up on
    std::chrono::steady_clock::duration age;
    std::string problem;  // why the last kill proved nothing, if it did not
  };
  std::vector<Draining> list() const;
  // ... on every loop of the process (any thread).
  static std::vector<Draining> everywhere();
  std::size_t size() const { return entries_.size(); }
  // Connections proven since the start, by a kill's answer.
  std::uint64_t proven() const { return proven_; }

 private:
  struct Listening;  // a given-up socket read on
  struct Entry {
    std::shared_ptr<Listening> listening;
    std::uint64_t serial = 0;
    BackendTarget target;
    std::uint64_t client_id = 0;
    std::string why;
    std::chrono::steady_clock::time_point since;
    std::chrono::steady_clock::time_point kill_at;  // when the kill goes (again)
    std::chrono::steady_clock::time_point kill_sent;
    std::chrono::milliseconds pause{0};  // before it is sent again
    bool killing = false;                // a kill is out
    std::string problem;
  };
  struct Killer {
    BackendConnectionPtr connection;
    std::shared_ptr<const config::Config> config;
    ShardStats stats;
    // How long a kill may go unanswered before it is sent again on a new connection.
    std::optional<ProofPatience> patience;
  };
  struct Waiter {
    std::vector<std::uint64_t> serials;  // the entries it waits for
    std::function<void()> proven;
  };
  class KillAnswers;

  void shutdown() override;
  void tick();
  void kill(Entry& entry);
  void renew_silent_killers(std::chrono::steady_clock::time_point now);
  void listen(std::uint64_t serial, const std::shared_ptr<Listening>& listening);
  void heard(std::uint64_t serial, const std::shared_ptr<Listening>& listening);
  void answered(std::uint64_t serial, std::string_view reply);
  void prove(std::uint64_t serial);
  void wait_for(std::vector<std::uint64_t> serials, std::function<void()> proven);
  Entry* find(std::uint64_t serial);
  Killer& killer(const Entry& entry);

  boost::asio::io_context& io_;
  // Guards entries_ against list() from another thread; this loop's own reads take no lock.
  mutable std::mutex lock_;
  boost::asio::steady_timer timer_;
  bool ticking_ = false;
  bool stopped_ = false;
  bool renewing_ = false;  // a silent kill connection is being closed: its errors prove nothing
  std::uint64_t next_serial_ = 1;
  std::uint64_t proven_ = 0;
  std::vector<Entry> entries_;
  std::vector<Waiter> waiters_;
  std::map<std::string, std::unique_ptr<Killer>> killers_;  // by address
  boost::intrusive_ptr<KillAnswers> answers_;
};

}  // namespace santral::router
