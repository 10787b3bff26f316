#include "router/hotkeys/unsalt_fold.h"

#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/errors.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/client_session.h"
#include "router/reply_sink.h"
#include "router/worker.h"

namespace santral::router {

using protocol::ClientError;
using protocol::error_message;

namespace {

class UnsaltFold final : public ReplySink {
 public:
  UnsaltFold(boost::intrusive_ptr<ClientSession> client, std::uint64_t slot, SaltedCounter counter)
      : client_(std::move(client)), slot_(slot), counter_(std::move(counter)) {}

  void next() {
    if (sub_key_ >= counter_.salts) return finish("+OK\r\n");
    step_ = Step::Take;
    send(counter_.shards[sub_key_], {"GETDEL", counter_.sub_keys[sub_key_]});
  }

  void deliver(std::uint64_t /*slot*/, std::uint32_t /*fragment*/,
               std::string_view reply) override {
    protocol::ReplyValue value;
    if (!protocol::parse_reply(reply, value) || value.is_error()) {
      std::string why = value.is_error() ? std::string(value.text) : "an unreadable reply";
      std::string advice = step_ == Step::Take
                               ? "that sub-key still holds its part of the count"
                               : fmt::format(
                                     "its part of the count, {}, was taken from it and "
                                     "must be added to the key by hand",
                                     taken_);
      return finish(
          fmt::format("-{}\r\n", error_message(ClientError::UnsaltFold, counter_.sub_keys[0],
                                               counter_.sub_keys[sub_key_], why, advice)));
    }
    if (step_ == Step::Take && value.type != protocol::ReplyValue::Type::Null) {
      taken_ = std::string(value.text);
      std::int64_t integer = 0;
      auto [end, ec] = std::from_chars(taken_.data(), taken_.data() + taken_.size(), integer);
      bool whole = ec == std::errc{} && end == taken_.data() + taken_.size();
      step_ = Step::Add;
      ++folded_;
      return send(counter_.shards[0],
                  {whole ? "INCRBY" : "INCRBYFLOAT", counter_.sub_keys[0], taken_});
    }
    ++sub_key_;
    next();
  }

 private:
  enum class Step { Take, Add };

  void send(std::size_t shard, std::vector<std::string_view> args) {
    std::string bytes;
    protocol::RespWriter(bytes).command(args);
    auto& worker = client_->worker();
    worker.pool()
        .shared(shard, client_->profile(), client_->state().id)
        .send(bytes, ReplySinkPtr(this), 0, 0);
  }

  void finish(const std::string& reply) {
    if (reply[0] == '+')
      spdlog::info("SANTRAL UNSALT: '{}' folded {} non-empty sub-keys back into it",
                   counter_.sub_keys[0], folded_);
    else
      spdlog::warn("SANTRAL UNSALT: {}", std::string_view(reply).substr(1, reply.size() - 3));
    client_->deliver(slot_, 0, reply);
  }

  boost::intrusive_ptr<ClientSession> client_;
  std::uint64_t slot_;
  SaltedCounter counter_;
  std::uint32_t sub_key_ = 1;  // sub-key 0 is the key itself
  std::uint32_t folded_ = 0;
  Step step_ = Step::Take;
  std::string taken_;
};

}  // namespace

void fold_sub_keys(boost::intrusive_ptr<ClientSession> client, std::uint64_t slot,
                   SaltedCounter counter) {
  boost::intrusive_ptr<UnsaltFold> fold(
      new UnsaltFold(std::move(client), slot, std::move(counter)));
  fold->next();
}

}  // namespace santral::router
