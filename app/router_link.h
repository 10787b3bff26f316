#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "config/config.h"

namespace santral::router {

// One blocking connection to a running router, one command at a time: for the command-line
// tools that ask it things (santral reshard, santral balance).
class RouterLink {
 public:
  explicit RouterLink(const config::Endpoint& router);  // throws when it cannot connect

  // The reply's frame (throws on a lost connection or a reply that is not RESP).
  std::string call(const std::vector<std::string_view>& args);

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::string buffer_;
};

// The options of every tool that asks a router (santral reshard, santral balance).
struct RouterOptions {
  std::string router = "127.0.0.1:6380";
  std::string password;

  void add_to(CLI::App& app);
  // --router as an endpoint, or nullopt after telling the user of `tool` what it should be.
  std::optional<config::Endpoint> endpoint(std::string_view tool) const;
  // A link to it, authenticated with --password when one is given; throws when it cannot connect.
  std::unique_ptr<RouterLink> connect(const config::Endpoint& endpoint) const;
};

// Prints a router's report reply (SANTRAL BALANCE PLAN, SANTRAL ANALYZE) for `tool`: the text
// before the proposed config's marker; with `write`, saves the proposed config there and tells
// the operator what to do with it (`then`). Returns the exit code.
int print_proposal(std::string_view tool, const std::string& frame, const std::string& write,
                   std::string_view then);

}  // namespace santral::router
