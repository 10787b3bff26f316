#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "protocol/request_parser.h"

namespace santral::router {

// Which requests on one shard connection a write concern (config::WriteConcern) confirms: the
// commands that write (the table's `write` flag; EVAL, EVALSHA and FCALL, which may), and EXEC,
// which runs what MULTI queued. Commands between MULTI and EXEC answer QUEUED, and no WAIT is
// sent inside a transaction; EXEC is confirmed as one write.
class WriteConcernTracker {
 public:
  // `request`: one command's RESP bytes, as the connection sends them, in order (read by the
  // parser that reads clients' requests, whose argument list is kept between calls).
  bool confirms(std::string_view request);
  bool in_multi() const { return in_multi_; }

 private:
  // Bytes a client's limits already let through: no limit of its own.
  protocol::RequestParser parser_{{SIZE_MAX, SIZE_MAX, SIZE_MAX}};
  bool in_multi_ = false;
};

// WAIT <replicas> <timeout_ms>.
std::string wait_command(const config::WriteConcern& concern);

}  // namespace santral::router
