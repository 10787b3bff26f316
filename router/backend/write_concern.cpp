#include "router/backend/write_concern.h"

#include "protocol/command_table.h"
#include "protocol/resp_writer.h"

namespace santral::router {

bool WriteConcernTracker::confirms(std::string_view request) {
  protocol::Request parsed;
  std::size_t consumed = 0;
  parser_.reset();
  if (parser_.parse(request, parsed, consumed) != protocol::ParseStatus::Complete) return false;
  const protocol::CommandSpec* spec = protocol::find_command(parsed.name());
  if (spec == nullptr) return false;
  if (spec->name == "multi") {
    in_multi_ = true;
    return false;
  }
  if (spec->name == "exec" || spec->name == "discard") {
    bool exec = spec->name == "exec" && in_multi_;
    in_multi_ = false;
    return exec;
  }
  if (in_multi_) return false;
  if (protocol::runs_script(*spec)) return !spec->name.ends_with("_ro");
  return spec->has(protocol::kWrite);
}

std::string wait_command(const config::WriteConcern& concern) {
  std::string replicas = std::to_string(concern.replicas);
  std::string timeout = std::to_string(concern.timeout.count());
  std::string_view args[] = {"WAIT", replicas, timeout};
  std::string out;
  protocol::RespWriter(out).command(args);
  return out;
}

}  // namespace santral::router
