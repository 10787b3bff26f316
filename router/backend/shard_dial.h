#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"
#include "router/backend/backend_target.h"
#include "router/transport/stream.h"

namespace santral::router {

// How a shard connection is opened: its address resolved, TCP connected, and for a shard with
// `tls: true` TLS negotiated with the certificates in force now, the shard's certificate
// checked (backend.tls.verify) before anything is sent. What is said then is ShardHandshake's.
class ShardDial {
 public:
  // Empty `why`: the stream is open. Else why it could not be opened.
  using Done = std::function<void(const std::string& why)>;

  explicit ShardDial(boost::asio::io_context& io) : resolver_(io) {}

  // Opens `stream` to `target`; an attempt still under way is dropped. `quiet`: a refused TLS
  // handshake is not logged (it was, on an earlier try). The arguments are the connection's own
  // members, read as they are when each step runs (a reload may change them meanwhile); `done`
  // keeps their connection alive.
  void start(Stream& stream, const std::shared_ptr<const config::Config>& config,
             const BackendTarget& target, bool quiet, Done done);
  // Drops the attempt under way: its `done` is never called.
  void cancel();
  // When the last attempt started (timeouts.connect counts from it).
  std::chrono::steady_clock::time_point started() const { return started_; }

 private:
  void start_tls(Stream& stream, const std::shared_ptr<const config::Config>& config,
                 const BackendTarget& target, bool quiet, Done done);

  boost::asio::ip::tcp::resolver resolver_;
  std::uint64_t attempt_ = 0;  // bumped by start() and cancel(); stale handlers compare and bail
  std::chrono::steady_clock::time_point started_;
};

}  // namespace santral::router
