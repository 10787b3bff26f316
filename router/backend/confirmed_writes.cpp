#include "router/backend/confirmed_writes.h"

#include <algorithm>
#include <utility>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/resp_writer.h"

namespace santral::router {

bool ConfirmedWrites::sent(std::string_view request, const config::WriteConcern& wanted) {
  if (!on_ || !writes_.confirms(request) || wanted.replicas == 0) return false;
  unconfirmed_ = true;
  batch_.replicas = std::max(batch_.replicas, wanted.replicas);
  batch_.timeout = std::max(batch_.timeout, wanted.timeout);
  return true;
}

void ConfirmedWrites::sent_silent(std::string_view request) {
  if (on_) writes_.confirms(request);
}

std::optional<config::WriteConcern> ConfirmedWrites::wait_due() {
  if (!unconfirmed_ || writes_.in_multi()) return std::nullopt;
  unconfirmed_ = false;
  return std::exchange(batch_, {0, std::chrono::milliseconds(0)});
}

void ConfirmedWrites::answered(ReplySinkPtr sink, std::uint64_t slot, std::uint32_t fragment,
                               std::string_view frame, const config::WriteConcern& wanted) {
  awaiting_.push_back({std::move(sink), slot, fragment, std::string(frame), wanted});
}

void ConfirmedWrites::confirmed(std::string_view frame, std::string_view shard,
                                std::string_view address, ShardStats& stats) {
  std::int64_t confirmed = 0;
  if (frame.size() > 3 && frame.front() == ':')
    confirmed =
        protocol::parse_integer<std::int64_t>(frame.substr(1, frame.size() - 3)).value_or(0);
  for (auto& held : std::exchange(awaiting_, {})) {
    bool keep = confirmed >= static_cast<std::int64_t>(held.concern.replicas) ||
                protocol::is_error_frame(held.frame);
    if (keep) {
      held.sink->deliver(held.slot, held.fragment, held.frame);
      continue;
    }
    ++stats.writes_unconfirmed;
    std::string reply;
    protocol::RespWriter(reply).error(
        protocol::error_message(protocol::ClientError::WriteNotReplicated, shard, address,
                                confirmed, held.concern.replicas, held.concern.timeout.count()));
    held.sink->deliver(held.slot, held.fragment, reply);
  }
}

void ConfirmedWrites::fail(const std::string& reply, ShardStats& stats) {
  unconfirmed_ = false;
  batch_ = {0, std::chrono::milliseconds(0)};
  writes_ = {};
  for (auto& held : std::exchange(awaiting_, {})) {
    ++stats.errors;
    held.sink->deliver(held.slot, held.fragment, reply);
  }
}

}  // namespace santral::router
