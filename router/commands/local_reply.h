#pragma once

#include <string>

#include "protocol/resp_writer.h"
#include "router/routes/routing.h"
#include "router/runtime/request_context.h"

namespace santral::router {

// Answers a command Santral handles itself with what `compose` writes, in the RESP version the
// client speaks.
template <typename Compose>
void answer(const Routed& r, Compose&& compose) {
  std::string out;
  protocol::RespWriter writer(out, r.client.state().protocol);
  compose(writer);
  r.client.reply(out);
}

}  // namespace santral::router
