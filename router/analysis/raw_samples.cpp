#include "router/analysis/raw_samples.h"

#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"

namespace santral::router {

std::string raw_samples_reply(const std::vector<SampledRequest>& samples) {
  std::string out;
  protocol::RespWriter w(out);
  w.array_header(samples.size());
  for (const auto& s : samples) {
    w.array_header(7);
    w.bulk(s.key);
    w.bulk(s.pattern);
    w.bulk(s.command);
    w.integer(s.write ? 1 : 0);
    w.integer(s.shards);
    w.integer(s.of);
    w.integer(s.at_us);
  }
  return out;
}

bool read_raw_samples(std::string_view frame, std::vector<SampledRequest>& out,
                      std::string& error) {
  protocol::ReplyValue reply;
  if (!protocol::parse_reply(frame, reply)) {
    error = "its reply is not RESP";
    return false;
  }
  if (reply.is_error()) {
    error = std::string(reply.text);
    return false;
  }
  using Type = protocol::ReplyValue::Type;
  if (reply.type != Type::Array) {
    error = "its reply is not an array of samples";
    return false;
  }
  for (const auto& row : reply.elements) {
    const auto& f = row.elements;
    if (row.type != Type::Array || f.size() != 7) {
      error = "a sample is not [key, pattern, command, write, shards, of, at_us]";
      return false;
    }
    SampledRequest s;
    s.key = f[0].text;
    s.pattern = f[1].text;
    s.command = f[2].text;
    s.write = f[3].integer != 0;
    s.shards = static_cast<std::uint16_t>(f[4].integer);
    s.of = static_cast<std::uint16_t>(f[5].integer);
    s.at_us = f[6].integer;
    out.push_back(std::move(s));
  }
  return true;
}

}  // namespace santral::router
