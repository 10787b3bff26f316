#include "app/router_link.h"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/balance/balance_proposal.h"

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
  protocol::ReplyScanner scanner;  // resumes where it stopped: a large reply is scanned once
  for (;;) {
    std::size_t length = 0;
    auto status = scanner.scan(buffer_, length);
    if (status == protocol::ScanStatus::Complete) {
      std::string frame = buffer_.substr(0, length);
      buffer_.erase(0, length);
      return frame;
    }
    if (status == protocol::ScanStatus::Error) throw std::runtime_error("not a RESP reply");
    char chunk[65536];
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

int print_proposal(std::string_view tool, const std::string& frame, const std::string& write,
                   std::string_view then) {
  protocol::ReplyValue reply;
  if (!protocol::parse_reply(frame, reply)) {
    std::cerr << tool << ": the router's reply is not RESP\n";
    return 1;
  }
  if (reply.is_error()) {
    std::cerr << tool << ": " << reply.text << "\n";
    return 1;
  }
  std::string_view text = reply.text, config_text;
  if (auto at = text.find(kProposedConfigMarker); at != std::string_view::npos) {
    config_text = text.substr(at + kProposedConfigMarker.size());
    text = text.substr(0, at);
  }
  std::cout << text;
  if (write.empty()) {
    if (!config_text.empty())
      std::cout << "(" << tool << " --write FILE saves the proposed config)\n";
    return 0;
  }
  if (config_text.empty()) {
    std::cout << "nothing to write: no config change is proposed\n";
    return 0;
  }
  std::ofstream out(write);
  out << config_text;
  if (!out.flush()) {
    std::cerr << tool << ": cannot write " << write << "\n";
    return 1;
  }
  std::cout << "wrote the proposed config to " << write << "; " << then << "\n";
  return 0;
}

}  // namespace santral::router
