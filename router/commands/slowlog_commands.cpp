#include "router/commands/slowlog_commands.h"

#include <algorithm>
#include <limits>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/commands/across_workers.h"
#include "router/merge/per_shard_merge.h"
#include "router/runtime/slow_log.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::RespWriter;

namespace {

constexpr std::int64_t kDefaultCount = 10;  // Redis's

}  // namespace

void slowlog_get(const Routed& r) {
  const auto& args = r.request.args;
  std::int64_t count = kDefaultCount;
  if (args.size() > 3) return r.session.reply_error(error_message(ClientError::SyntaxError));
  if (args.size() == 3) {
    auto asked = protocol::parse_integer(args[2]);
    if (!asked) return r.session.reply_error(error_message(ClientError::NotAnInteger));
    if (*asked < -1) return r.session.reply_error(error_message(ClientError::SlowlogCount));
    count = *asked;
  }
  std::size_t max_len = r.session.worker().config().slowlog.max_len;
  std::size_t wanted = count < 0 ? max_len : std::min<std::size_t>(count, max_len);
  int protocol = r.session.state().protocol;
  across_workers<std::vector<SlowEntry>>(
      r, [wanted](WorkerServices& worker) { return worker.slow_log().newest(wanted); },
      [wanted, protocol](std::vector<std::vector<SlowEntry>> parts) {
        std::vector<SlowEntry> all;
        for (auto& part : parts)
          all.insert(all.end(), std::make_move_iterator(part.begin()),
                     std::make_move_iterator(part.end()));
        std::sort(all.begin(), all.end(),
                  [](const SlowEntry& a, const SlowEntry& b) { return a.id > b.id; });
        if (all.size() > wanted) all.resize(wanted);
        std::string out;
        RespWriter writer(out, protocol);
        writer.array_header(all.size());
        for (const auto& entry : all) write_slow_entry(writer, entry);
        return out;
      });
}

void slowlog_len(const Routed& r) {
  std::size_t max_len = r.session.worker().config().slowlog.max_len;
  across_workers<std::size_t>(
      r, [](WorkerServices& worker) { return worker.slow_log().size(); },
      [max_len](std::vector<std::size_t> sizes) {
        std::size_t total = 0;
        for (auto size : sizes) total += size;
        std::string out;
        RespWriter(out).integer(static_cast<std::int64_t>(std::min(total, max_len)));
        return out;
      });
}

void slowlog_reset(const Routed& r) {
  across_workers<bool>(
      r,
      [](WorkerServices& worker) {
        worker.slow_log().reset();
        return true;
      },
      [](std::vector<bool>) { return std::string("+OK\r\n"); });
}

void santral_shard(const Routed& r) {
  const auto& args = r.request.args;
  auto syntax_error = [&] {
    r.session.reply_error(error_message(ClientError::ShardSlowlogSyntax));
  };
  if (args.size() < 4 || !equals_nocase(args[2], "slowlog")) return syntax_error();
  std::string_view verb = args[3];
  bool get = equals_nocase(verb, "get");
  if (get ? args.size() > 5
          : (args.size() != 4 || !(equals_nocase(verb, "len") || equals_nocase(verb, "reset"))))
    return syntax_error();
  if (get && args.size() == 5) {
    auto count = protocol::parse_integer(args[4]);
    if (!count) return r.session.reply_error(error_message(ClientError::NotAnInteger));
    if (*count < -1) return r.session.reply_error(error_message(ClientError::SlowlogCount));
  }
  // SLOWLOG <verb> [count] as each shard takes it.
  std::vector<std::string_view> shard_args(args.begin() + 2, args.end());
  std::string& bytes = r.session.scratch();
  bytes.clear();
  RespWriter(bytes).command(shard_args);

  const auto& map = r.session.worker().shard_map();
  std::vector<std::string> names;
  for (std::size_t s = 0; s < map.shard_count(); ++s) names.push_back(map.shard(s).name);
  auto shards = static_cast<std::uint32_t>(names.size());
  auto slot =
      r.session.open_slot(shards, per_shard_merge(std::move(names), r.session.state().protocol));
  for (std::uint32_t s = 0; s < shards; ++s) r.session.backend(s).send(bytes, &r.session, slot, s);
}

}  // namespace santral::router
