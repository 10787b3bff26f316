#include "router/commands/slowlog_commands.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/reply_scanner.h"
#include "protocol/reply_value.h"
#include "protocol/resp_writer.h"
#include "router/commands/across_fleet.h"
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

// One entry as SLOWLOG GET writes it, with what orders it among every router's.
struct WrittenEntry {
  std::int64_t unix_time = 0;
  std::uint64_t id = 0;
  std::string frame;
};

// The count SLOWLOG GET [count] asks for, at most slowlog.max_len; the error to answer, or "".
std::string parse_count(const Routed& r, std::size_t at, std::size_t& wanted) {
  const auto& args = r.request.args;
  std::int64_t count = kDefaultCount;
  if (args.size() > at + 1) return error_message(ClientError::SyntaxError);
  if (args.size() == at + 1) {
    auto asked = protocol::parse_integer(args[at]);
    if (!asked) return error_message(ClientError::NotAnInteger);
    if (*asked < -1) return error_message(ClientError::SlowlogCount);
    count = *asked;
  }
  std::size_t max_len = r.client.worker().config().slowlog.max_len;
  wanted = count < 0 ? max_len : std::min<std::size_t>(count, max_len);
  return {};
}

// This router's entries (every worker's), written; in a fleet Santral's measure names the
// router.
std::vector<WrittenEntry> written(std::vector<std::vector<SlowEntry>> parts, int protocol,
                                  const std::string& router) {
  std::vector<WrittenEntry> all;
  for (auto& part : parts) {
    for (auto& entry : part) {
      if (!router.empty()) entry.measure += ", on router " + router;
      WrittenEntry one{entry.unix_time, entry.id, {}};
      RespWriter writer(one.frame, protocol);
      write_slow_entry(writer, entry);
      all.push_back(std::move(one));
    }
  }
  return all;
}

// Another router's SLOWLOG LOCAL GET, entry by entry; a router that did not answer is an entry
// of its own that names it (id 0, now, 0 us), so that it is never silently left out.
void add_router_entries(const RouterPart& part, std::vector<WrittenEntry>& all) {
  protocol::ReplyValue value;
  std::string error = part_error(part, value, protocol::ReplyValue::Type::Array);
  if (error.empty()) {
    // The entries as sent: each frame is found again by scanning the array's elements.
    std::string_view rest = std::string_view(part.frame).substr(part.frame.find('\n') + 1);
    for (const auto& entry : value.elements) {
      protocol::ReplyScanner scanner;
      std::size_t length = 0;
      if (scanner.scan(rest, length) != protocol::ScanStatus::Complete) break;
      if (entry.elements.size() >= 2)
        all.push_back({entry.elements[1].integer,
                       static_cast<std::uint64_t>(entry.elements[0].integer),
                       std::string(rest.substr(0, length))});
      rest.remove_prefix(length);
    }
    return;
  }
  SlowEntry named;
  named.unix_time = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  std::string text = "santral: router " + part.router + " did not answer";
  std::string_view arg = text;
  SlowArgs said;
  slow_args(std::span<const std::string_view>(&arg, 1), said);
  named.args.assign(said.begin(), said.end());
  named.measure = error;
  WrittenEntry one{named.unix_time, std::numeric_limits<std::uint64_t>::max(), {}};
  RespWriter writer(one.frame);
  write_slow_entry(writer, named);
  all.push_back(std::move(one));
}

std::string entries_reply(std::vector<WrittenEntry> all, std::size_t wanted, int protocol) {
  std::sort(all.begin(), all.end(), [](const WrittenEntry& a, const WrittenEntry& b) {
    return a.unix_time != b.unix_time ? a.unix_time > b.unix_time : a.id > b.id;
  });
  if (all.size() > wanted) all.resize(wanted);
  std::string out;
  RespWriter(out, protocol).array_header(all.size());
  for (const auto& entry : all) out += entry.frame;
  return out;
}

std::size_t sum(const std::vector<std::size_t>& sizes) {
  std::size_t total = 0;
  for (auto size : sizes) total += size;
  return total;
}

// The routers that did not answer as a want (an integer or OK), named; "" when all did.
std::string silent_routers(const std::vector<RouterPart>& routers, protocol::ReplyValue::Type want,
                           std::size_t* added) {
  std::string silent;
  for (const auto& part : routers) {
    protocol::ReplyValue value;
    std::string error = part_error(part, value, want);
    if (error.empty()) {
      if (added != nullptr) *added += static_cast<std::size_t>(value.integer);
      continue;
    }
    silent += (silent.empty() ? "" : ", ") + part.router + " (" + error + ")";
  }
  return silent;
}

std::vector<std::string> slowlog_local_command(std::initializer_list<std::string> verb) {
  std::vector<std::string> command{"SANTRAL", "SLOWLOG", "LOCAL"};
  command.insert(command.end(), verb);
  return command;
}

// The fleet's, or (`local`) this router's: SLOWLOG GET [count] and SANTRAL SLOWLOG LOCAL GET.
void answer_get(const Routed& r, std::size_t at, bool local) {
  std::size_t wanted = 0;
  if (auto error = parse_count(r, at, wanted); !error.empty()) return r.client.reply_error(error);
  int protocol = r.client.state().protocol;
  std::string router = fleet_router_name(r.client.worker());
  auto collect = [wanted](WorkerServices& worker) { return worker.slow_log().newest(wanted); };
  if (local || router.empty()) {
    across_workers<std::vector<SlowEntry>>(
        r, collect, [wanted, protocol, router](std::vector<std::vector<SlowEntry>> parts) {
          return entries_reply(written(std::move(parts), protocol, router), wanted, protocol);
        });
    return;
  }
  across_fleet<std::vector<SlowEntry>>(
      r, collect, slowlog_local_command({"GET", std::to_string(wanted)}),
      [wanted, protocol, router](std::vector<std::vector<SlowEntry>> parts,
                                 const std::vector<RouterPart>& routers) {
        auto all = written(std::move(parts), protocol, router);
        for (const auto& part : routers) add_router_entries(part, all);
        return entries_reply(std::move(all), wanted, protocol);
      });
}

void answer_len(const Routed& r, bool local) {
  std::size_t max_len = r.client.worker().config().slowlog.max_len;
  auto collect = [](WorkerServices& worker) { return worker.slow_log().size(); };
  auto reply = [](std::size_t total) {
    std::string out;
    RespWriter(out).integer(static_cast<std::int64_t>(total));
    return out;
  };
  if (local || fleet_router_name(r.client.worker()).empty()) {
    across_workers<std::size_t>(r, collect,
                                [max_len, reply](const std::vector<std::size_t>& sizes) {
                                  return reply(std::min(sum(sizes), max_len));
                                });
    return;
  }
  across_fleet<std::size_t>(
      r, collect, slowlog_local_command({"LEN"}),
      [max_len, reply](const std::vector<std::size_t>& sizes,
                       const std::vector<RouterPart>& routers) {
        std::size_t total = std::min(sum(sizes), max_len);
        auto silent = silent_routers(routers, protocol::ReplyValue::Type::Integer, &total);
        if (silent.empty()) return reply(total);
        std::string out;
        RespWriter(out).error(error_message(ClientError::RoutersSilent, "SLOWLOG LEN",
                                            fmt::format("{} entries", total), silent));
        return out;
      });
}

void answer_reset(const Routed& r, bool local) {
  auto collect = [](WorkerServices& worker) {
    worker.slow_log().reset();
    return true;
  };
  if (local || fleet_router_name(r.client.worker()).empty()) {
    across_workers<bool>(r, collect,
                         [](const std::vector<bool>&) { return std::string("+OK\r\n"); });
    return;
  }
  across_fleet<bool>(
      r, collect, slowlog_local_command({"RESET"}),
      [](const std::vector<bool>&, const std::vector<RouterPart>& routers) {
        auto silent = silent_routers(routers, protocol::ReplyValue::Type::SimpleString, nullptr);
        if (silent.empty()) return std::string("+OK\r\n");
        std::string out;
        RespWriter(out).error(
            error_message(ClientError::RoutersSilent, "SLOWLOG RESET", "reset", silent));
        return out;
      });
}

}  // namespace

void slowlog_get(const Routed& r) {
  answer_get(r, 2, false);
}
void slowlog_len(const Routed& r) {
  answer_len(r, false);
}
void slowlog_reset(const Routed& r) {
  answer_reset(r, false);
}

// SANTRAL SLOWLOG LOCAL GET [count] | LEN | RESET: this router's slow log only.
void santral_slowlog(const Routed& r) {
  const auto& args = r.request.args;
  if (!equals_nocase(args[2], "local"))
    return r.client.reply_error(error_message(ClientError::SlowlogLocalSyntax));
  std::string_view verb = args[3];
  if (equals_nocase(verb, "get")) return answer_get(r, 4, true);
  if (args.size() == 4 && equals_nocase(verb, "len")) return answer_len(r, true);
  if (args.size() == 4 && equals_nocase(verb, "reset")) return answer_reset(r, true);
  r.client.reply_error(error_message(ClientError::SlowlogLocalSyntax));
}

void santral_shard(const Routed& r) {
  const auto& args = r.request.args;
  auto syntax_error = [&] { r.client.reply_error(error_message(ClientError::ShardSlowlogSyntax)); };
  if (args.size() < 4 || !equals_nocase(args[2], "slowlog")) return syntax_error();
  std::string_view verb = args[3];
  bool get = equals_nocase(verb, "get");
  if (get ? args.size() > 5
          : (args.size() != 4 || !(equals_nocase(verb, "len") || equals_nocase(verb, "reset"))))
    return syntax_error();
  if (get && args.size() == 5) {
    auto count = protocol::parse_integer(args[4]);
    if (!count) return r.client.reply_error(error_message(ClientError::NotAnInteger));
    if (*count < -1) return r.client.reply_error(error_message(ClientError::SlowlogCount));
  }
  // SLOWLOG <verb> [count] as each shard takes it.
  std::vector<std::string_view> shard_args(args.begin() + 2, args.end());
  std::string& bytes = r.client.scratch();
  bytes.clear();
  RespWriter(bytes).command(shard_args);

  const auto& map = r.client.worker().shard_map();
  std::vector<std::string> names;
  for (std::size_t s = 0; s < map.shard_count(); ++s) names.push_back(map.shard(s).name);
  auto shards = static_cast<std::uint32_t>(names.size());
  auto slot =
      r.client.open_slot(shards, per_shard_merge(std::move(names), r.client.state().protocol));
  for (std::uint32_t s = 0; s < shards; ++s) r.client.backend(s).send(bytes, &r.client, slot, s);
}

}  // namespace santral::router
