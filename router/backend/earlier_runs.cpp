#include "router/backend/earlier_runs.h"

#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/backend/connection_name.h"
#include "router/backend/proof_patience.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

namespace {

constexpr auto kAgain = std::chrono::seconds(1);

std::string bytes_of(std::span<const std::string_view> args) {
  std::string out;
  protocol::RespWriter(out).command(args);
  return out;
}

// One server: lists its clients, ends those of earlier runs, and says so once they are all
// answered for.
class EarlierRuns final : public ReplySink {
 public:
  EarlierRuns(boost::asio::io_context& io, BackendTarget server,
              std::shared_ptr<const config::Config> config, std::function<void()> done)
      : server_(std::move(server)),
        config_(std::move(config)),
        done_(std::move(done)),
        retry_(io),
        silence_(io),
        io_(io),
        patience_(config_->timeouts.request) {}

  void start() {
    if (!connection_ || connection_->state() == BackendConnection::State::Stopped) {
      BackendConnection::Options options;
      options.drains = false;
      connection_ = BackendConnection::open(io_, server_, config_, stats_, options);
    }
    listing_ = true;
    std::string_view args[] = {"CLIENT", "LIST", "TYPE", "normal"};
    // No deadline: a stalled server answers when it wakes.
    connection_->send(bytes_of(args), ReplySinkPtr(this), 0, 0, false);
    watch(++asked_);
  }

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    if (listing_) return listed(reply);
    if (protocol::is_error_frame(reply) && reply.find("No such client") == std::string_view::npos)
      failed_ = protocol::line_text(reply);
    if (--left_ > 0) return;
    if (!failed_.empty()) return again(std::exchange(failed_, {}));
    spdlog::info("shard '{}' ({}): ended {} connection{} an earlier run of this router left there",
                 server_.shard_name, server_.address.text(), ended_, ended_ == 1 ? "" : "s");
    finish();
  }

 private:
  void listed(std::string_view reply) {
    listing_ = false;
    protocol::ReplyValue list;
    if (!protocol::parse_reply(reply, list) || list.is_error())
      return again(protocol::line_text(reply));
    auto ids = earlier_run_clients(list.text, connection_name_prefix(), connection_name());
    if (ids.empty()) return finish();
    left_ = ids.size();
    ended_ = ids.size();
    for (const auto& id : ids) {
      std::string_view args[] = {"CLIENT", "KILL", "ID", id};
      connection_->send(bytes_of(args), ReplySinkPtr(this), 1, 0, false);
    }
  }

  // Still unanswered after its patience (proof_patience.h): this connection is closed (its
  // answers, errors Santral makes, ask again).
  void watch(std::uint64_t asked) {
    silence_.expires_after(patience_.now());
    silence_.async_wait(
        [self = boost::intrusive_ptr<EarlierRuns>(this), asked](boost::system::error_code ec) {
          if (ec || !self->done_ || self->asked_ != asked || !self->connection_) return;
          spdlog::warn("shard '{}' ({}): no answer within {} ms; asking again on a new connection",
                       self->server_.shard_name, self->server_.address.text(),
                       self->patience_.now().count());
          self->patience_.ran_out();
          self->connection_->stop();
        });
  }

  void again(const std::string& why) {
    silence_.cancel();
    spdlog::warn(
        "shard '{}' ({}): cannot yet end the connections an earlier run of this router left "
        "there ({}); the move resumes once it can, asking again in {} s",
        server_.shard_name, server_.address.text(), why, kAgain.count());
    retry_.expires_after(kAgain);
    retry_.async_wait(
        [self = boost::intrusive_ptr<EarlierRuns>(this)](boost::system::error_code ec) {
          if (!ec) self->start();
        });
  }

  void finish() {
    silence_.cancel();
    if (connection_) connection_->stop();
    if (done_) std::exchange(done_, nullptr)();
  }

  BackendTarget server_;
  std::shared_ptr<const config::Config> config_;
  std::function<void()> done_;
  boost::asio::steady_timer retry_;
  boost::asio::steady_timer silence_;
  boost::asio::io_context& io_;
  ProofPatience patience_;
  std::uint64_t asked_ = 0;  // CLIENT LISTs sent: a watch of an earlier one does nothing
  ShardStats stats_;
  BackendConnectionPtr connection_;
  bool listing_ = false;
  std::size_t left_ = 0;
  std::size_t ended_ = 0;
  std::string failed_;
};

}  // namespace

std::vector<std::string> earlier_run_clients(std::string_view client_list, std::string_view prefix,
                                             std::string_view mine) {
  std::vector<std::string> ids;
  if (prefix.empty()) return ids;
  while (!client_list.empty()) {
    auto end = client_list.find('\n');
    auto line = client_list.substr(0, end);
    client_list = end == std::string_view::npos ? std::string_view() : client_list.substr(end + 1);
    auto field = [line](std::string_view key) -> std::string_view {
      std::size_t at = 0;
      while (at < line.size()) {
        auto space = line.find(' ', at);
        auto word = line.substr(at, space == std::string_view::npos ? line.npos : space - at);
        if (word.starts_with(key) && word.size() > key.size() && word[key.size()] == '=')
          return word.substr(key.size() + 1);
        if (space == std::string_view::npos) break;
        at = space + 1;
      }
      return {};
    };
    auto name = field("name");
    while (!name.empty() && (name.back() == '\r')) name.remove_suffix(1);
    if (name.starts_with(prefix) && name != mine) ids.emplace_back(field("id"));
  }
  return ids;
}

void end_earlier_runs(boost::asio::io_context& io, std::vector<BackendTarget> servers,
                      const std::shared_ptr<const config::Config>& config,
                      std::function<void()> done) {
  if (servers.empty() || connection_name_prefix().empty()) return done();
  auto left = std::make_shared<std::size_t>(servers.size());
  auto one = [left, done = std::move(done)] {
    if (--*left == 0) done();
  };
  for (auto& server : servers) {
    server.profile = {};
    boost::intrusive_ptr<EarlierRuns>(new EarlierRuns(io, std::move(server), config, one))->start();
  }
}

}  // namespace santral::router
