#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

namespace santral::router {

// A connection's bytes: straight on its TCP socket, or through TLS on that socket. Sessions
// and backend connections read and write through it; everything else (close, cancel, options,
// waiting for readability) stays on socket().
//
// The TLS state is shared with the operations in flight: a backend connection that reconnects
// starts TLS afresh on the same socket while the old state's aborted operations still finish.
class Stream {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using TlsStream = boost::asio::ssl::stream<Socket&>;

  explicit Stream(Socket socket) : socket_(std::move(socket)) {}

  Socket& socket() { return socket_; }
  const Socket& socket() const { return socket_; }
  bool tls() const { return tls_ != nullptr; }
  // Wraps the socket in a new TLS state made from `context`; the caller does the handshake.
  TlsStream& start_tls(std::shared_ptr<boost::asio::ssl::context> context) {
    tls_ = std::make_shared<Tls>(socket_, std::move(context));
    return tls_->stream;
  }
  void end_tls() { tls_.reset(); }
  TlsStream* tls_stream() { return tls_ ? &tls_->stream : nullptr; }

  template <typename Handler>
  void async_handshake(boost::asio::ssl::stream_base::handshake_type type, Handler&& handler) {
    tls_->stream.async_handshake(type,
                                 [keep = tls_, handler = std::forward<Handler>(handler)](
                                     const boost::system::error_code& ec) mutable { handler(ec); });
  }

  template <typename Buffers, typename Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (!tls_) return socket_.async_read_some(buffers, std::forward<Handler>(handler));
    tls_->stream.async_read_some(buffers, [keep = tls_, handler = std::forward<Handler>(handler)](
                                              const boost::system::error_code& ec,
                                              std::size_t bytes) mutable { handler(ec, bytes); });
  }

  // Writes some of `buffers`: one write system call on a plain socket (a TLS record on TLS).
  template <typename Buffers, typename Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (!tls_) return socket_.async_write_some(buffers, std::forward<Handler>(handler));
    tls_->stream.async_write_some(buffers, [keep = tls_, handler = std::forward<Handler>(handler)](
                                               const boost::system::error_code& ec,
                                               std::size_t bytes) mutable { handler(ec, bytes); });
  }

  // Writes all of `buffers` (asio::async_write on the socket or on TLS).
  template <typename Buffers, typename Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    if (!tls_) return boost::asio::async_write(socket_, buffers, std::forward<Handler>(handler));
    boost::asio::async_write(tls_->stream, buffers,
                             [keep = tls_, handler = std::forward<Handler>(handler)](
                                 const boost::system::error_code& ec, std::size_t bytes) mutable {
                               handler(ec, bytes);
                             });
  }

 private:
  struct Tls {
    Tls(Socket& socket, std::shared_ptr<boost::asio::ssl::context> certificates)
        : context(std::move(certificates)), stream(socket, *context) {}
    std::shared_ptr<boost::asio::ssl::context> context;  // the certificates in force at connect
    TlsStream stream;
  };

  Socket socket_;
  std::shared_ptr<Tls> tls_;  // one pointer: a plain connection pays 16 bytes for TLS
};

}  // namespace santral::router
