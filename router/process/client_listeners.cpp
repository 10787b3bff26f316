#include "router/process/client_listeners.h"

#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "protocol/errors.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;
using asio::ip::tcp;

std::string ClientListeners::describe(const config::Config& config) {
  std::string tls =
      config.tls.listen_port == 0
          ? ""
          : "TLS on " + config::Endpoint{config.tls.listen_host, config.tls.listen_port}.text();
  if (!config.plain_listener) return tls;
  return config.listen.text() + (tls.empty() ? "" : " and " + tls);
}

bool ClientListeners::open(const config::Config& config) {
  if (config.plain_listener && !open_one(plain_, config.listen.host, config.listen.port, "listen"))
    return false;
  return config.tls.listen_port == 0 ||
         open_one(tls_, config.tls.listen_host, config.tls.listen_port, "tls.listen");
}

void ClientListeners::start() {
  if (plain_.is_open()) accept(plain_, false);
  if (tls_.is_open()) accept(tls_, true);
}

void ClientListeners::close() {
  closed_ = true;
  boost::system::error_code ignored;
  plain_.close(ignored);
  tls_.close(ignored);
}

// Binds `acceptor` to host:port; false (and logged) when it cannot.
bool ClientListeners::open_one(tcp::acceptor& acceptor, const std::string& host, std::uint16_t port,
                               std::string_view what) {
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  std::string address = config::Endpoint{host, port}.text();
  if (ec || endpoints.empty()) {
    spdlog::critical("cannot resolve {} address {}: {}", what, address, ec.message());
    return false;
  }
  tcp::endpoint endpoint = *endpoints.begin();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    spdlog::critical("cannot listen on {} ({}): {}", address, what, ec.message());
    return false;
  }
  return true;
}

void ClientListeners::accept(tcp::acceptor& acceptor, bool tls) {
  acceptor.async_accept([this, &acceptor, tls](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || closed_) return;
    if (ec) {
      spdlog::warn("accept failed: {}", ec.message());
    } else {
      hand_over(std::move(socket), tls);
    }
    accept(acceptor, tls);
  });
}

// An accepted connection goes to the next worker. Its descriptor leaves this thread's reactor
// and joins the worker's on the worker's own thread: a worker's reactor runs without locks on
// its descriptors (BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO), so no other thread may register one.
void ClientListeners::hand_over(tcp::socket socket, bool tls) {
  boost::system::error_code ec;
  std::size_t max_clients = topology_->config->limits.max_clients;
  if (shared_.connected_clients.load() >= max_clients) {
    shared_.rejected_clients.fetch_add(1);
    std::string reply;
    protocol::RespWriter(reply).error(
        protocol::error_message(protocol::ClientError::MaxClients, max_clients));
    asio::write(socket, asio::buffer(reply), ec);
    socket.close(ec);
    return;
  }
  auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;  // already reset by the client
  auto descriptor = socket.release(ec);
  if (ec) return;
  Worker& worker = *workers_[next_worker_];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  shared_.connected_clients.fetch_add(1);
  auto id = shared_.client_id_base + shared_.next_client_id.fetch_add(1);
  asio::post(worker.io(), [this, &worker, id, tls, protocol, descriptor] {
    tcp::socket adopted(worker.io());
    boost::system::error_code ec;
    adopted.assign(protocol, descriptor, ec);
    if (ec) {
      ::close(descriptor);
      shared_.connected_clients.fetch_sub(1);
      return;
    }
    worker.adopt(std::move(adopted), id, tls);
  });
}

}  // namespace santral::router
