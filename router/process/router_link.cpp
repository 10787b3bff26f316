#include "router/process/router_link.h"

#include <iostream>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace asio = boost::asio;

RouterLink::RouterLink(const config::Endpoint& router) : socket_(io_) {
  asio::ip::tcp::resolver resolver(io_);
  asio::connect(socket_, resolver.resolve(router.host, std::to_string(router.port)));
}

std::string RouterLink::call(const std::vector<std::string_view>& args) {
  std::string request;
  protocol::RespWriter(request).command(args);
  asio::write(socket_, asio::buffer(request));
  for (;;) {
    protocol::ReplyScanner scanner;
    std::size_t length = 0;
    auto status = scanner.scan(buffer_, length);
    if (status == protocol::ScanStatus::Complete) {
      std::string frame = buffer_.substr(0, length);
      buffer_.erase(0, length);
      return frame;
    }
    if (status == protocol::ScanStatus::Error) throw std::runtime_error("not a RESP reply");
    char chunk[4096];
    std::size_t got = socket_.read_some(asio::buffer(chunk));
    buffer_.append(chunk, got);
  }
}

void RouterOptions::add_to(CLI::App& app) {
  app.add_option("-r,--router", router, "The router's address (host:port)");
  app.add_option("-a,--password", password, "AUTH with this password first");
}

std::optional<config::Endpoint> RouterOptions::endpoint(std::string_view tool) const {
  config::Endpoint out;
  if (config::parse_endpoint(router, out)) return out;
  std::cerr << tool << ": --router expects host:port, got '" << router << "'\n";
  return std::nullopt;
}

std::unique_ptr<RouterLink> RouterOptions::connect(const config::Endpoint& endpoint) const {
  auto link = std::make_unique<RouterLink>(endpoint);
  if (!password.empty()) link->call({"AUTH", password});
  return link;
}

}  // namespace santral::router
