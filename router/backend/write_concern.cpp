#include "router/backend/write_concern.h"

#include <charconv>

#include "protocol/command_table.h"
#include "protocol/resp_writer.h"

namespace santral::router {

namespace {

// The command name of RESP bytes `*<n>\r\n$<len>\r\n<name>\r\n...`; empty when they are not.
std::string_view command_name(std::string_view request) {
  auto line = request.find("\r\n");
  if (request.empty() || request.front() != '*' || line == std::string_view::npos ||
      line + 2 >= request.size() || request[line + 2] != '$')
    return {};
  auto length_end = request.find("\r\n", line + 3);
  std::size_t length = 0;
  if (length_end == std::string_view::npos ||
      std::from_chars(request.data() + line + 3, request.data() + length_end, length).ec !=
          std::errc{} ||
      length_end + 2 + length > request.size())
    return {};
  return request.substr(length_end + 2, length);
}

}  // namespace

bool WriteConcernTracker::confirms(std::string_view request) {
  const protocol::CommandSpec* spec = protocol::find_command(command_name(request));
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
