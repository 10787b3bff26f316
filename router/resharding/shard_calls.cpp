#include "router/resharding/shard_calls.h"

#include <string_view>
#include <utility>

#include "protocol/resp_writer.h"
#include "router/backend/reply_sink.h"

namespace santral::router {

namespace {

class Collected final : public ReplySink {
 public:
  Collected(std::size_t count, ShardReplies done)
      : replies_(count), left_(count), done_(std::move(done)) {}

  void deliver(std::uint64_t slot, std::uint32_t /*fragment*/, std::string_view reply) override {
    if (slot >= replies_.size() || left_ == 0) return;
    replies_[slot] = std::string(reply);
    if (--left_ == 0) std::exchange(done_, nullptr)(std::move(replies_));
  }

 private:
  std::vector<std::string> replies_;
  std::size_t left_;
  ShardReplies done_;
};

}  // namespace

void call_shard(BackendConnection& connection, const std::vector<std::string>& requests,
                ShardReplies done) {
  if (requests.empty()) return done({});
  boost::intrusive_ptr<Collected> sink(new Collected(requests.size(), std::move(done)));
  for (std::size_t i = 0; i < requests.size(); ++i) connection.send(requests[i], sink, i, 0);
}

std::string command_bytes(std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> list(args);
  std::string out;
  protocol::RespWriter(out).command(list);
  return out;
}

std::string command_bytes(const std::vector<std::string>& args) {
  std::vector<std::string_view> list(args.begin(), args.end());
  std::string out;
  protocol::RespWriter(out).command(list);
  return out;
}

}  // namespace santral::router
