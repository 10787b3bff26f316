#include "router/hotkeys/detection/hot_key_commands.h"

#include <memory>

#include <fmt/format.h>

#include "protocol/arguments.h"
#include "protocol/errors.h"
#include "protocol/resp_writer.h"
#include "router/hotkeys/detection/hot_key_report.h"
#include "router/hotkeys/salting/salt_table.h"
#include "router/hotkeys/salting/salting_change.h"
#include "router/runtime/audit_log.h"
#include "router/runtime/request_context.h"
#include "router/runtime/worker_services.h"

namespace santral::router {

using protocol::ClientError;
using protocol::equals_nocase;
using protocol::error_message;
using protocol::parse_integer;

namespace {

std::string rate_text(double rate) {
  return fmt::format("{:.1f}", rate);
}

}  // namespace

void santral_hotkeys(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  long long count = 10;
  if (args.size() == 4 && equals_nocase(args[2], "COUNT")) {
    auto given = parse_integer(args[3]);
    if (!given || *given < 1) return client.reply_error(error_message(ClientError::HotKeysSyntax));
    count = *given;
  } else if (args.size() != 2) {
    return client.reply_error(error_message(ClientError::HotKeysSyntax));
  }
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  int protocol = client.state().protocol;
  list_hot_keys(
      client.worker().peers(), client.worker().io(), static_cast<std::size_t>(count),
      [keep, slot, protocol](const std::vector<HotKeyRate>& rates) {
        std::string out;
        protocol::RespWriter writer(out, protocol);
        writer.array_header(rates.size());
        for (const auto& rate : rates) {
          auto ops = rate_text(rate.ops);
          auto reads = rate_text(rate.reads);
          auto writes = rate_text(rate.writes);
          writer.fields({{"key", rate.key},
                         {"ops_per_sec", ops},
                         {"reads_per_sec", reads},
                         {"writes_per_sec", writes},
                         {"shard", rate.shard},
                         {"salted", static_cast<std::int64_t>(rate.salts)},
                         {"cached", std::int64_t{rate.cached ? 1 : 0}},
                         {"salted_by", rate.salts > 0 ? salted_by_name(rate.salted_by) : ""}});
        }
        keep->deliver(slot, 0, out);
      });
}

// SANTRAL SALT and UNSALT change how the fleet routes a key: each, refused or done, is one
// line of the audit log.
void santral_salt(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  auto refuse = [&](const std::string& message) {
    audit_command(client.worker().shared().audit, "salt", client.state(), args, false, message);
    client.reply_error(message);
  };
  std::string_view key = args[2];
  auto salts = parse_integer(args[3]);
  if (!salts || *salts < config::kMinSalts || *salts > config::kMaxSalts)
    return refuse(error_message(ClientError::SaltCount, config::kMinSalts, config::kMaxSalts));
  auto reply = config::SaltReply::Estimate;
  if (args.size() == 6 && equals_nocase(args[4], "REPLY") && equals_nocase(args[5], "exact"))
    reply = config::SaltReply::Exact;
  else if (args.size() != 4 && !(args.size() == 6 && equals_nocase(args[4], "REPLY") &&
                                 equals_nocase(args[5], "estimate")))
    return refuse(error_message(ClientError::SaltSyntax));
  auto& worker = client.worker();
  if (const SaltedCounter* counter = worker.salts().find(key))
    return refuse(error_message(ClientError::AlreadySalted, key, counter->salts));
  auto not_salted =
      salt_key(worker, key,
               SaltOverrides::Salting{static_cast<std::uint32_t>(*salts), reply, SaltedBy::Command},
               fmt::format("by client {} ({})", client.state().id, client.state().peer));
  if (!not_salted.empty()) return refuse(not_salted);
  audit_command(worker.shared().audit, "salt", client.state(), args, true, "OK");
  client.reply("+OK\r\n");
}

void santral_unsalt(const Routed& routed) {
  auto& client = routed.client;
  const auto& args = routed.request.args;
  std::string_view key = args[2];
  auto* audit = client.worker().shared().audit;
  if (client.worker().salts().find(key) == nullptr) {
    auto message = error_message(ClientError::NotSalted, key);
    audit_command(audit, "unsalt", client.state(), args, false, message);
    return client.reply_error(message);
  }
  auto slot = client.open_slot();
  boost::intrusive_ptr<RequestContext> keep(&client);
  // The fold answers later, on this worker: the line is written with its reply.
  auto done = [keep, slot, audit, command = std::vector<std::string>(args.begin(), args.end())](
                  const std::string& reply) {
    if (audit != nullptr) {
      std::vector<std::string_view> views(command.begin(), command.end());
      audit_command(audit, "unsalt", keep->state(), views, !reply.starts_with('-'),
                    reply_first_line(reply));
    }
    keep->deliver(slot, 0, reply);
  };
  UnsaltFoldTarget target{client.profile(), client.state().id, std::move(done)};
  unsalt_key(client.worker(), key, false,
             fmt::format("by client {} ({})", client.state().id, client.state().peer),
             std::move(target));
}

}  // namespace santral::router
