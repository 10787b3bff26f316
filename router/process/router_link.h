#pragma once

#include <string>
#include <string_view>
#include <vector>

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

}  // namespace santral::router
