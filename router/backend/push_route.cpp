#include "router/backend/push_route.h"

#include <utility>

namespace santral::router {

bool is_pubsub_message(std::string_view frame) {
  if (frame.size() < 4 || (frame[0] != '*' && frame[0] != '>')) return false;
  std::string_view rest = frame.substr(1);
  return rest.starts_with("3\r\n$7\r\nmessage\r\n") ||
         rest.starts_with("4\r\n$8\r\npmessage\r\n") || rest.starts_with("3\r\n$8\r\nsmessage\r\n");
}

void PushRoute::deliver(std::string_view frame, std::size_t shard_index) {
  if ((role_ == ConnectionRole::Subscriber || tracks()) && sink_)
    sink_->deliver(kPushSlot, static_cast<std::uint32_t>(shard_index), frame);
}

void PushRoute::tracking_lost(std::size_t shard_index) {
  if (tracks() && sink_) sink_->connection_lost(shard_index);
}

void PushRoute::lost(std::size_t shard_index) {
  if (auto sink = std::move(sink_)) sink->connection_lost(shard_index);
}

}  // namespace santral::router
