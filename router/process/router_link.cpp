#include "router/process/router_link.h"

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

}  // namespace santral::router
