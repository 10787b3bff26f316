#include "tests/support/scripted_shard.h"

#include <boost/asio/write.hpp>

#include "protocol/request_parser.h"

namespace santral::test {

namespace asio = boost::asio;
using asio::ip::tcp;

struct ScriptedShard::Connection {
  explicit Connection(asio::io_context& io, std::size_t index) : socket(io), index(index) {}
  tcp::socket socket;
  std::size_t index;
  std::string input;
  std::vector<std::string> requests;
  protocol::RequestParser parser;
  bool reading = true;
  bool read_pending = false;
  char buffer[4096];
};

ScriptedShard::ScriptedShard(asio::io_context& io, Answer answer)
    : io_(io),
      acceptor_(io, {asio::ip::address_v4::loopback(), 0}),
      port_(acceptor_.local_endpoint().port()),
      answer_(std::move(answer)) {
  accept();
}

ScriptedShard::~ScriptedShard() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& connection : connections_) connection->socket.close(ignored);
}

void ScriptedShard::accept() {
  auto connection = std::make_shared<Connection>(io_, connections_.size());
  acceptor_.async_accept(connection->socket, [this, connection](boost::system::error_code ec) {
    if (ec) return;
    connections_.push_back(connection);
    read(connection);
    accept();
  });
}

std::size_t ScriptedShard::accepted() const {
  return connections_.size();
}

std::vector<std::string> ScriptedShard::requests(std::size_t connection) const {
  return connection < connections_.size() ? connections_[connection]->requests
                                          : std::vector<std::string>{};
}

void ScriptedShard::reading(std::size_t connection, bool on) {
  auto& c = connections_.at(connection);
  c->reading = on;
  if (on) {
    serve(c);
    read(c);
  }
}

void ScriptedShard::write(std::size_t connection, const std::string& bytes) {
  boost::system::error_code ignored;
  asio::write(connections_.at(connection)->socket, asio::buffer(bytes), ignored);
}

void ScriptedShard::read(const std::shared_ptr<Connection>& connection) {
  if (!connection->reading || connection->read_pending) return;
  connection->read_pending = true;
  connection->socket.async_read_some(
      asio::buffer(connection->buffer),
      [this, connection](boost::system::error_code ec, std::size_t bytes) {
        connection->read_pending = false;
        if (ec) return;
        connection->input.append(connection->buffer, bytes);
        serve(connection);
        read(connection);
      });
}

// Answers every complete request in the input, while the connection is being read.
void ScriptedShard::serve(const std::shared_ptr<Connection>& connection) {
  while (connection->reading) {
    protocol::Request request;
    std::size_t consumed = 0;
    auto status = connection->parser.parse(connection->input, request, consumed);
    if (status == protocol::ParseStatus::NeedMore || status == protocol::ParseStatus::Error) return;
    std::vector<std::string> words(request.args.begin(), request.args.end());
    connection->input.erase(0, consumed);
    if (words.empty()) continue;
    std::string text;
    for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
    connection->requests.push_back(text);
    if (auto reply = answer_(connection->index, words)) write(connection->index, *reply);
  }
}

}  // namespace santral::test
